//! Event planning: a department's team-building day out.
//!
//! Model: each instance draws its own map around the office (sites with ticket prices,
//! some priced by period of the month, restaurants, interest ratings; the places list
//! gives each place's direction from the office, the road map the roads), joins the
//! places with the minimum spanning tree of their straight-line distances (roads a
//! little longer than the straight line), and draws the participants' availability in
//! the month after the scenario's: a common window of 1-3 days inside one price period,
//! and for each participant a 3-7 day window containing it, with one participant's
//! window starting and another's ending exactly on the common window so that the
//! overlap is the common window. Each participant tells their own availability when
//! asked, as that window, as two stretches, or as the days they are away (drawn per
//! participant so that the dates said carry no order that gives the common window).
//! An itinerary leaves the office, visits a morning site, a restaurant and a different
//! afternoon site, and returns; its interest, cost, distance, return time and overall
//! score are what `Check::Domain(Outing)` computes from the map stored in the
//! checkpoint, so any itinerary the agent proposes is judged exactly.
//!
//! Levels: A1-A4 give the itinerary (A1: 1-2 of interest/cost/distance, A2: 2-3 of
//! them, A3: all four metrics, A4: all four plus the return time against a deadline),
//! B1-B4 the same with the agent's own itinerary, C1-C4 ask for the best itinerary by
//! interest, cost, distance or score.
//!
//! Deliberate differences from the reference: every instance has its own map, prices
//! and availability (the reference fixed its seeds, so every instance shared one world
//! and one common period); the event date is checked as a range (the reference accepted
//! only the window's two endpoints); the "plan given" checkpoint is awarded (the answer
//! must repeat the given itinerary), so A-levels reach full score; the given itinerary
//! is drawn from the instance's own map and the A4 deadline is drawn around its return
//! time (so both answers occur), not fixed names and fixed 17:30/18:00/19:00; the
//! guidelines state the rounding up of travel times the code uses; participants are a
//! sign-up sheet of at most ten department members (the whole department when it is
//! that small), so the asking stays bounded in large companies; asking every
//! participant is its own checkpoint; metric tolerances are absolute and sized to each
//! metric's precision rather than an absolute-and-relative pair; a partly wrong answer
//! keeps its other checkpoints (no early raw-count returns); the answer key is never on
//! the drive.

use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_scenario::check::{Outing, outings, parse_hhmm};
use tbsim_scenario::text_width;
use tbsim_scenario::{
    Check, CheckpointSpec, Clue, Condition, Content, DomainCheck, Drawing, FileSpec, Gate,
    OutingAspect, OutingCheck, OutingMap, OutingMetric, Scenario, Shape, TaskSpec,
};

const GUIDELINES: &str = include_str!("corpus/event_planning/guidelines.md");

/// The level: A (itinerary given), B (own itinerary), C (best itinerary), 1-4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Given itinerary; 1-2 of interest, cost, distance.
    A1,
    /// Given itinerary; 2-3 of interest, cost, distance.
    A2,
    /// Given itinerary; all four metrics.
    A3,
    /// Given itinerary; all four metrics, return time and whether it is back in time.
    A4,
    /// Own itinerary; 1-2 of interest, cost, distance.
    B1,
    /// Own itinerary; 2-3 of interest, cost, distance.
    B2,
    /// Own itinerary; all four metrics.
    B3,
    /// Own itinerary; all four metrics, return time and whether it is back in time.
    B4,
    /// The itinerary with the highest interest.
    C1,
    /// The cheapest itinerary.
    C2,
    /// The shortest itinerary.
    C3,
    /// The itinerary with the highest overall score.
    C4,
}

const LEVELS: [Level; 12] = [
    Level::A1,
    Level::A2,
    Level::A3,
    Level::A4,
    Level::B1,
    Level::B2,
    Level::B3,
    Level::B4,
    Level::C1,
    Level::C2,
    Level::C3,
    Level::C4,
];

impl Level {
    fn key(self) -> String {
        format!("{self:?}").to_lowercase()
    }
    fn letter(self) -> char {
        format!("{self:?}").chars().next().unwrap_or('A')
    }
    fn number(self) -> u8 {
        LEVELS.iter().position(|l| *l == self).unwrap_or(0) as u8 % 4 + 1
    }
}

/// What the C levels optimise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// C1: the largest total interest.
    HighestInterest,
    /// C2: the lowest cost.
    LowestCost,
    /// C3: the shortest distance.
    ShortestDistance,
    /// C4: the highest overall score.
    HighestScore,
}

impl Mode {
    fn metric(self) -> OutingMetric {
        match self {
            Mode::HighestInterest => OutingMetric::Interest,
            Mode::LowestCost => OutingMetric::Cost,
            Mode::ShortestDistance => OutingMetric::Distance,
            Mode::HighestScore => OutingMetric::Score,
        }
    }
    fn words(self) -> &'static str {
        match self {
            Mode::HighestInterest => "the highest total interest",
            Mode::LowestCost => "the lowest cost per person",
            Mode::ShortestDistance => "the shortest total distance",
            Mode::HighestScore => "the highest overall score",
        }
    }
}

const MODES: [Mode; 4] = [
    Mode::HighestInterest,
    Mode::LowestCost,
    Mode::ShortestDistance,
    Mode::HighestScore,
];

/// An itinerary by position in the places list (1-based): morning site, restaurant,
/// afternoon site. Names are drawn per instance, so a given itinerary is named by
/// position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanPick {
    /// Morning site number.
    pub morning: usize,
    /// Restaurant number.
    pub lunch: usize,
    /// Afternoon site number.
    pub afternoon: usize,
}

/// Parameters; unset ones are drawn (the level among those consistent with the rest).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// A1-C4.
    #[serde(default)]
    pub level: Option<Level>,
    /// The department whose outing it is.
    #[serde(default)]
    pub department: Option<String>,
    /// Number of sites (3-12, default 6).
    #[serde(default)]
    pub n_loc: Option<usize>,
    /// Number of restaurants (1-20, default 10).
    #[serde(default)]
    pub n_res: Option<usize>,
    /// The given itinerary (A levels only).
    #[serde(default)]
    pub plan: Option<PlanPick>,
    /// The metrics asked for (A and B levels; must fit the level's rule).
    #[serde(default)]
    pub metrics: Option<Vec<OutingMetric>>,
    /// The deadline for the return, `HH:MM` (A4 and B4 only).
    #[serde(default)]
    pub end_time: Option<String>,
    /// What to optimise (C levels only; must match the level).
    #[serde(default)]
    pub mode: Option<Mode>,
}

/// The variants: the twelve levels.
pub fn variants() -> Vec<(String, Params)> {
    LEVELS
        .iter()
        .map(|l| {
            (
                format!("event_planning/{}", l.key()),
                Params {
                    level: Some(*l),
                    ..Params::default()
                },
            )
        })
        .collect()
}

const THREE: [OutingMetric; 3] = [
    OutingMetric::Interest,
    OutingMetric::Cost,
    OutingMetric::Distance,
];

/// Why a level cannot take these parameters, if it cannot.
fn inconsistent(level: Level, p: &Params) -> Option<String> {
    let (letter, num) = (level.letter(), level.number());
    if p.plan.is_some() && letter != 'A' {
        return Some(format!("`plan` is only for A levels, not {level:?}"));
    }
    if p.mode.is_some() && letter != 'C' {
        return Some(format!("`mode` is only for C levels, not {level:?}"));
    }
    if let Some(m) = p.mode
        && MODES[usize::from(num) - 1] != m
    {
        return Some(format!(
            "{level:?} optimises {:?}, not {m:?}",
            MODES[usize::from(num) - 1]
        ));
    }
    if p.end_time.is_some() && !(letter != 'C' && num == 4) {
        return Some(format!("`end_time` is only for A4 and B4, not {level:?}"));
    }
    if let Some(ms) = &p.metrics {
        if letter == 'C' {
            return Some(format!(
                "`metrics` are only for A and B levels, not {level:?}"
            ));
        }
        let mut sorted = ms.clone();
        sorted.sort();
        sorted.dedup();
        let ok = sorted.len() == ms.len()
            && match num {
                1 => (1..=2).contains(&ms.len()) && ms.iter().all(|m| THREE.contains(m)),
                2 => (2..=3).contains(&ms.len()) && ms.iter().all(|m| THREE.contains(m)),
                _ => ms.len() == 4,
            };
        if !ok {
            return Some(format!(
                "{level:?} takes {}, not {ms:?}",
                match num {
                    1 => "1-2 distinct metrics of interest, cost and distance",
                    2 => "2-3 distinct metrics of interest, cost and distance",
                    _ => "all four metrics",
                }
            ));
        }
    }
    None
}

const DEPARTMENTS: [&str; 6] = [
    "Engineering",
    "Sales",
    "Marketing",
    "Product",
    "Human Resources",
    "Finance",
];

/// Site name parts: first words, then (category, name endings, descriptions).
const SITE_WORDS: [&str; 20] = [
    "Willow", "Amber", "Heron", "Cobalt", "Juniper", "Larch", "Marigold", "Osprey", "Saffron",
    "Thistle", "Foxglove", "Kestrel", "Bramble", "Linden", "Moss", "Pebble", "Hawthorn", "Silver",
    "Wren", "Granite",
];
const SITE_KINDS: [(&str, &[&str], &[&str]); 8] = [
    (
        "park",
        &["Park", "Gardens"],
        &[
            "Lawns, shaded paths and a boating pond; easy walking for all ages.",
            "A landscaped park with a rose walk and plenty of picnic spots.",
        ],
    ),
    (
        "lake",
        &["Lake", "Reservoir"],
        &[
            "A quiet shoreline trail with rowing boats for hire.",
            "Open water, a lakeside promenade and a small visitor centre.",
        ],
    ),
    (
        "museum",
        &["Museum", "Science Hall"],
        &[
            "Hands-on galleries about how the region's industries grew.",
            "Rotating exhibitions and a rooftop terrace over the old town.",
        ],
    ),
    (
        "farm",
        &["Farm", "Orchard"],
        &[
            "Fruit picking in season, farm animals and a cider barn.",
            "Working fields with guided tours and a farm kitchen.",
        ],
    ),
    (
        "hill",
        &["Hill", "Lookout"],
        &[
            "A short climb to a viewpoint over the whole valley.",
            "Forest trails of several lengths and a panoramic summit.",
        ],
    ),
    (
        "wetland",
        &["Wetland", "Marsh"],
        &[
            "Boardwalks over reed beds, with birdwatching hides.",
            "A restored marsh with guided nature walks.",
        ],
    ),
    (
        "gallery",
        &["Gallery", "Arts Yard"],
        &[
            "Studios and workshops where visitors can try printmaking.",
            "Modern art in a converted warehouse, with a sculpture garden.",
        ],
    ),
    (
        "heritage",
        &["Old Town", "Heritage Village"],
        &[
            "Narrow lanes, restored courtyards and traditional crafts.",
            "A preserved village with a tea-making demonstration.",
        ],
    ),
];
const RESTAURANT_WORDS: [&str; 20] = [
    "Copper Lantern",
    "Blue Heron",
    "Olive Branch",
    "Red Kettle",
    "Golden Wheat",
    "Stone Bridge",
    "Jade Garden",
    "Silver Spoon",
    "Maple Court",
    "Harbour Light",
    "Plum Blossom",
    "Little Orchard",
    "Tall Pines",
    "Lotus Pond",
    "River Stone",
    "Bamboo Grove",
    "Sunny Terrace",
    "Wild Thyme",
    "Three Lanterns",
    "East Gate",
];
const CUISINES: [(&str, &str); 10] = [
    ("noodles", "Noodle House"),
    ("hotpot", "Hotpot"),
    ("dumplings", "Dumpling Bar"),
    ("grill", "Grill"),
    ("bistro", "Bistro"),
    ("tea and dim sum", "Tea House"),
    ("home cooking", "Kitchen"),
    ("barbecue", "Barbecue"),
    ("seafood", "Seafood Hall"),
    ("vegetarian", "Green Table"),
];
/// Ticket prices per person (a guided activity at every site, so none is free),
/// on a grid of 5; the early and late prices of a site priced by period are drawn
/// around it. Meals per person, also on a grid of 5. The cheapest itinerary (two
/// early tickets at 0.8 and the cheapest meal: 36 + 36 + 55) costs more than the
/// dearest single price on the list (95 x 1.3 = 124): a cost is a sum of three
/// prices that no one price, nor any other figure of the materials, states (an
/// itinerary's cost was a price on the list, or a stay's 120 minutes, often
/// enough for a constant to pick it, issue 37).
const TICKETS: (u32, u32) = (45, 95);
const MEALS: (u32, u32) = (55, 120);
/// Interest ratings out of ten, two decimals. An itinerary's interest (19.20 to
/// 29.40) then lies above every figure of the materials but a rare long road: out
/// of five, its 9.60 to 14.70 met list numbers, period days and road lengths often
/// enough for a constant to pick it (issue 37); the period days are ordinals now
/// (`10th`), which are not figures.
const INTEREST: (f64, f64) = (6.4, 9.8);
const DEPART: &str = "09:00";
const SPEED: u32 = 30;
const STAYS: (u32, u32, u32) = (120, 90, 120);
/// Most participants asked (a sign-up sheet of a large department).
const MAX_PARTICIPANTS: usize = 10;

/// A road between two places (indices: office, then sites, then restaurants) and its km.
type Road = (usize, usize, f64);

struct Place {
    name: String,
    kind: String,
    x: f64,
    y: f64,
    /// Ticket (early, mid, late) or meal price.
    price: [u32; 3],
    interest: f64,
    about: String,
}

/// What one participant says about their days in the month.
#[derive(Debug, Clone, PartialEq)]
enum Avail {
    /// Free from one day to another, both included.
    Window(u32, u32),
    /// Free in two separate stretches.
    Two((u32, u32), (u32, u32)),
    /// Free every day of the month but the stretches away.
    Away(Vec<(u32, u32)>),
}

impl Avail {
    fn free(&self, day: u32) -> bool {
        let within = |(a, b): (u32, u32)| (a..=b).contains(&day);
        match self {
            Avail::Window(a, b) => within((*a, *b)),
            Avail::Two(x, y) => within(*x) || within(*y),
            Avail::Away(v) => !v.iter().any(|w| within(*w)),
        }
    }

    fn say(&self, month: &str, date: &dyn Fn(u32) -> String) -> String {
        match self {
            Avail::Window(a, b) => format!(
                "In {month} I'm free from {} to {}, both days included.",
                date(*a),
                date(*b)
            ),
            Avail::Two((a, b), (c, d)) => format!(
                "In {month} I'm free from {} to {}, and again from {} to {}, both ends included.",
                date(*a),
                date(*b),
                date(*c),
                date(*d)
            ),
            Avail::Away(v) => {
                let spans: Vec<String> = v
                    .iter()
                    .map(|(a, b)| format!("from {} to {}", date(*a), date(*b)))
                    .collect();
                format!(
                    "In {month} any day suits me except {}, when I'm away (both ends included).",
                    spans.join(" and ")
                )
            }
        }
    }
}

/// How each participant puts their availability. Whoever's window starts or ends
/// on the common window's own days says instead when they are away (the days right
/// before or after it), and the others give their window, two stretches or the days
/// they are away, drawn per participant; if nobody then shuts out the far days, one
/// away-sayer names every day outside the common window. So nobody names a day of
/// the common window, and the dates heard fall on both sides of it in no fixed order:
/// no date said, by rank or position (the lower median of one window per person
/// always was the window's first day, issue 37), is a right answer; working out
/// whose free days overlap is. Where that cannot be done (a tiny month edge), every
/// participant gives their window as before. Its own stream keeps the rest of the
/// instance as it was.
fn availability_forms(
    ctx: &Ctx<'_>,
    windows: &[(u32, u32)],
    (s, e): (u32, u32),
    last_day: u32,
) -> Vec<Avail> {
    let mut rng = ctx.rng("event/availability-forms");
    let plain: Vec<Avail> = windows.iter().map(|&(a, b)| Avail::Window(a, b)).collect();
    let meets_in_window = |forms: &[Avail]| {
        (1..=last_day).all(|d| forms.iter().all(|f| f.free(d)) == (s..=e).contains(&d))
    };
    // A span of 1-4 days within `lo..=hi`, or none when it does not fit.
    let span = |rng: &mut tbsim_core::rng::StreamRng, lo: u32, hi: u32| -> Option<(u32, u32)> {
        if lo == 0 || hi < lo {
            return None;
        }
        let len = rng.random_range(1..=(hi - lo + 1).min(4));
        let x = rng.random_range(lo..=hi + 1 - len);
        Some((x, x + len - 1))
    };
    let mut forms = Vec::new();
    for &(a, b) in windows {
        let pin = a == s || b == e;
        let away = |rng: &mut tbsim_core::rng::StreamRng| {
            // Right next to the common window on a side this person closes, else
            // anywhere on that side; said in either order.
            let mut spans = Vec::new();
            if s > 1 {
                spans.extend(if a == s {
                    Some((s.saturating_sub(rng.random_range(1..=4)).max(1), s - 1))
                } else {
                    span(rng, 1, s - 1)
                });
            }
            if e < last_day {
                spans.extend(if b == e {
                    Some((e + 1, (e + rng.random_range(1..=4)).min(last_day)))
                } else {
                    span(rng, e + 1, last_day)
                });
            }
            if spans.len() == 2 && rng.random_bool(0.5) {
                spans.swap(0, 1);
            }
            Avail::Away(spans)
        };
        let form = if pin {
            away(&mut rng)
        } else {
            match rng.random_range(0..3u32) {
                0 => Avail::Window(a, b),
                1 => {
                    // A second stretch of 2-5 days at least a day away, said first
                    // or second.
                    let len = rng.random_range(2..=5u32);
                    let before = a > len + 1 && (b + len + 1 > last_day || rng.random_bool(0.5));
                    let extra = if before {
                        let c = rng.random_range(1..=a - len - 1);
                        Some((c, c + len - 1))
                    } else if b + len < last_day {
                        let c = rng.random_range(b + 2..=last_day + 1 - len);
                        Some((c, c + len - 1))
                    } else {
                        None
                    };
                    match extra {
                        Some(x) if rng.random_bool(0.5) => Avail::Two(x, (a, b)),
                        Some(x) => Avail::Two((a, b), x),
                        None => Avail::Window(a, b),
                    }
                }
                _ => away(&mut rng),
            }
        };
        forms.push(form);
    }
    if !meets_in_window(&forms) {
        // Someone must shut out the far days: the first away-sayer names them all.
        let full: Vec<(u32, u32)> = [(1, s.saturating_sub(1)), (e + 1, last_day)]
            .into_iter()
            .filter(|(x, y)| *x >= 1 && x <= y)
            .collect();
        if let Some(f) = forms.iter_mut().find(|f| matches!(f, Avail::Away(_))) {
            *f = Avail::Away(full);
        }
    }
    let says_a_window_day = |f: &Avail| match f {
        Avail::Window(a, b) => (s..=e).contains(a) || (s..=e).contains(b),
        Avail::Two(x, y) => [x.0, x.1, y.0, y.1].iter().any(|d| (s..=e).contains(d)),
        Avail::Away(v) => v
            .iter()
            .any(|w| (s..=e).contains(&w.0) || (s..=e).contains(&w.1)),
    };
    if meets_in_window(&forms)
        && !forms.iter().any(says_a_window_day)
        && !forms
            .iter()
            .any(|f| matches!(f, Avail::Away(v) if v.is_empty()))
    {
        forms
    } else {
        plain
    }
}

fn days_in(y: i32, m: u32) -> u32 {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 31,
    }
}

/// "north-east of the office": the direction only. Offsets in kilometres were
/// figures of the same size as an itinerary's interest (and, under 1 km, its
/// score), so an answer sometimes stood in the list by chance; the distances that
/// count are the roads', on the road map.
fn location(x: f64, y: f64) -> String {
    // Eight compass points by the offset's slope: tan(22.5°) ≈ 0.4142.
    let (ax, ay) = (x.abs(), y.abs());
    let ns = if y < 0.0 { "south" } else { "north" };
    let ew = if x < 0.0 { "west" } else { "east" };
    let dir = if ay > ax / 0.4142 {
        ns.to_owned()
    } else if ay < ax * 0.4142 {
        ew.to_owned()
    } else {
        format!("{ns}-{ew}")
    };
    format!("{dir} of the office")
}

fn hhmm(m: u32) -> String {
    tbsim_scenario::date::Clock(m).to_string()
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// Prim's algorithm over straight-line distances; ties go to the lower index.
fn spanning_tree(points: &[(f64, f64)]) -> Vec<(usize, usize)> {
    let n = points.len();
    let d = |a: usize, b: usize| {
        let (dx, dy) = (points[a].0 - points[b].0, points[a].1 - points[b].1);
        (dx * dx + dy * dy).sqrt()
    };
    let mut inside = vec![false; n];
    let mut best: Vec<(f64, usize)> = (0..n).map(|i| (d(0, i), 0)).collect();
    inside[0] = true;
    let mut edges = Vec::new();
    for _ in 1..n {
        let Some(next) = (0..n)
            .filter(|&i| !inside[i])
            .min_by(|&a, &b| best[a].0.total_cmp(&best[b].0).then(a.cmp(&b)))
        else {
            break;
        };
        inside[next] = true;
        edges.push((best[next].1, next));
        for i in 0..n {
            if !inside[i] && d(next, i) < best[i].0 {
                best[i] = (d(next, i), next);
            }
        }
    }
    edges
}

/// Axis-aligned box: left, top, right, bottom.
type Bbox = (i32, i32, i32, i32);

fn overlaps(a: Bbox, b: Bbox) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// The first candidate box that hits nothing taken, or the first candidate.
fn place(candidates: &[Bbox], taken: &[Bbox]) -> Bbox {
    candidates
        .iter()
        .copied()
        .find(|c| !taken.iter().any(|t| overlaps(*c, *t)))
        .unwrap_or(candidates[0])
}

/// The road map as a picture: roads with their lengths, places with their names.
/// Labels are placed greedily where they overlap no marker and no earlier label.
fn map_drawing(places: &[(&str, u8, f64, f64)], roads: &[(usize, usize, f64)]) -> Drawing {
    let (w, h) = (1100i32, 860i32);
    let (area_x, area_y, pw, ph) = (70.0, 120.0, 800.0, 700.0);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for (_, _, x, y) in places {
        x0 = x0.min(*x);
        x1 = x1.max(*x);
        y0 = y0.min(*y);
        y1 = y1.max(*y);
    }
    let scale = (pw / (x1 - x0).max(1.0)).min(ph / (y1 - y0).max(1.0));
    // Centre the map in its area.
    let (left, top) = (
        area_x + (pw - (x1 - x0) * scale) / 2.0,
        area_y + (ph - (y1 - y0) * scale) / 2.0,
    );
    let px = |x: f64, y: f64| -> (i32, i32) {
        (
            (left + (x - x0) * scale).round() as i32,
            (top + (y1 - y) * scale).round() as i32,
        )
    };
    const INK: &str = "#1a1a1a";
    const ROAD: &str = "#9aa5b1";
    let colours = ["#1a1a1a", "#2f855a", "#c05621"];
    let mut shapes = vec![
        Shape::Text(24, 16, 2, INK.into(), "TEAM OUTING ROAD MAP".into()),
        Shape::Text(
            24,
            44,
            1,
            INK.into(),
            "ROAD LENGTHS IN KM. NORTH IS UP.".into(),
        ),
        Shape::Rect(24, 66, 12, 12, colours[0].into()),
        Shape::Text(42, 69, 1, INK.into(), "OFFICE".into()),
        Shape::Disc(110, 72, 6, colours[1].into()),
        Shape::Text(122, 69, 1, INK.into(), "SITE".into()),
        Shape::Disc(180, 72, 6, colours[2].into()),
        Shape::Text(192, 69, 1, INK.into(), "RESTAURANT".into()),
    ];
    let bar = (5.0 * scale).round() as i32;
    shapes.push(Shape::Line(300, 74, 300 + bar, 74, 2, INK.into()));
    shapes.push(Shape::Text(306 + bar, 70, 1, INK.into(), "5 KM".into()));
    let at: Vec<(i32, i32)> = places.iter().map(|p| px(p.2, p.3)).collect();
    for (a, b, _) in roads {
        shapes.push(Shape::Line(
            at[*a].0,
            at[*a].1,
            at[*b].0,
            at[*b].1,
            3,
            ROAD.into(),
        ));
    }
    let mut taken: Vec<Bbox> = at
        .iter()
        .map(|(x, y)| (x - 9, y - 9, x + 9, y + 9))
        .collect();
    let mut labels = Vec::new();
    for ((name, kind, _, _), (cx, cy)) in places.iter().zip(&at) {
        let t = name.to_uppercase();
        let tw = text_width(&t, 1) as i32;
        let (cx, cy) = (*cx, *cy);
        let boxes: Vec<Bbox> = [
            (cx + 11, cy - 4),
            (cx - 11 - tw, cy - 4),
            (cx - tw / 2, cy - 21),
            (cx - tw / 2, cy + 13),
            (cx + 11, cy - 15),
            (cx + 11, cy + 7),
            (cx - 11 - tw, cy - 15),
            (cx - 11 - tw, cy + 7),
        ]
        .iter()
        .map(|(x, y)| (x - 2, y - 2, x + tw + 2, y + 9))
        .collect();
        let b = place(&boxes, &taken);
        taken.push(b);
        labels.push(Shape::Rect(
            b.0,
            b.1,
            (b.2 - b.0) as u32,
            (b.3 - b.1) as u32,
            "#ffffff".into(),
        ));
        labels.push(Shape::Text(
            b.0 + 2,
            b.1 + 2,
            1,
            colours[usize::from(*kind)].into(),
            t,
        ));
    }
    for (a, b, km) in roads {
        let t = format!("{km:.2}");
        let tw = text_width(&t, 1) as i32;
        let ((ax, ay), (bx, by)) = (at[*a], at[*b]);
        let boxes: Vec<Bbox> = [0.5, 0.35, 0.65, 0.25, 0.75]
            .iter()
            .map(|f: &f64| {
                let (mx, my) = (
                    ax + (f64::from(bx - ax) * f).round() as i32,
                    ay + (f64::from(by - ay) * f).round() as i32,
                );
                (mx - tw / 2 - 2, my - 6, mx + tw / 2 + 3, my + 5)
            })
            .collect();
        let b = place(&boxes, &taken);
        taken.push(b);
        labels.push(Shape::Rect(
            b.0,
            b.1,
            (b.2 - b.0) as u32,
            (b.3 - b.1) as u32,
            "#eef2f6".into(),
        ));
        labels.push(Shape::Text(b.0 + 2, b.1 + 2, 1, "#334e68".into(), t));
    }
    for ((_, kind, _, _), (cx, cy)) in places.iter().zip(&at) {
        match kind {
            0 => shapes.push(Shape::Rect(cx - 7, cy - 7, 14, 14, colours[0].into())),
            k => shapes.push(Shape::Disc(*cx, *cy, 7, colours[usize::from(*k)].into())),
        }
    }
    shapes.extend(labels);
    Drawing {
        width: w as u32,
        height: h as u32,
        background: "#ffffff".into(),
        shapes,
    }
}

/// Draws the places and their roads: the office at the origin, sites within 25 km,
/// restaurants near the office or near a site, no two places closer than 1.5 km;
/// roads join the places along the minimum spanning tree of their straight-line
/// distances and are 5-35% longer than the straight line.
fn draw_map(
    mrng: &mut tbsim_core::rng::StreamRng,
    n_loc: usize,
    n_res: usize,
) -> (Vec<Place>, Vec<Place>, Vec<Road>) {
    let mut points: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    let mut place_at =
        |rng: &mut tbsim_core::rng::StreamRng, cx: f64, cy: f64, r_max: f64, r_min: f64| {
            let mut pt = (cx, cy);
            for _ in 0..200 {
                // Uniform in the ring by rejection: no trigonometry, so no dependence
                // on the platform's libm.
                let (dx, dy) = (
                    rng.random_range(-r_max..=r_max),
                    rng.random_range(-r_max..=r_max),
                );
                let d = dx * dx + dy * dy;
                if d > r_max * r_max || d < r_min * r_min {
                    continue;
                }
                pt = (r2(cx + dx), r2(cy + dy));
                if points.iter().all(|q| {
                    let (ex, ey) = (q.0 - pt.0, q.1 - pt.1);
                    (ex * ex + ey * ey).sqrt() >= 1.5
                }) {
                    break;
                }
            }
            points.push(pt);
            pt
        };
    let site_names = pick_distinct(mrng, SITE_WORDS.len(), n_loc);
    let mut sites = Vec::new();
    for w in site_names {
        let (kind, endings, abouts) = SITE_KINDS[mrng.random_range(0..SITE_KINDS.len())];
        let name = format!(
            "{} {}",
            SITE_WORDS[w],
            endings[mrng.random_range(0..endings.len())]
        );
        let (x, y) = place_at(mrng, 0.0, 0.0, 25.0, 4.0);
        let base = 5 * mrng.random_range(TICKETS.0 / 5..=TICKETS.1 / 5);
        let price = if mrng.random_bool(0.5) {
            let f = |lo: f64, hi: f64, r: &mut tbsim_core::rng::StreamRng| {
                (f64::from(base) * r.random_range(lo..=hi)).round() as u32
            };
            [f(0.8, 0.9, mrng), f(0.95, 1.05, mrng), f(1.1, 1.3, mrng)]
        } else {
            [base; 3]
        };
        sites.push(Place {
            name,
            kind: kind.into(),
            x,
            y,
            price,
            interest: r2(mrng.random_range(INTEREST.0..=INTEREST.1)),
            about: abouts[mrng.random_range(0..abouts.len())].into(),
        });
    }
    let rest_names = pick_distinct(mrng, RESTAURANT_WORDS.len(), n_res);
    let mut restaurants = Vec::new();
    for (k, w) in rest_names.into_iter().enumerate() {
        let (cuisine, ending) = CUISINES[mrng.random_range(0..CUISINES.len())];
        let (x, y) = if k < n_res.div_ceil(2) {
            place_at(mrng, 0.0, 0.0, 15.0, 1.5)
        } else {
            let s = &sites[k % n_loc];
            place_at(mrng, s.x, s.y, 9.0, 1.0)
        };
        restaurants.push(Place {
            name: format!("{} {ending}", RESTAURANT_WORDS[w]),
            kind: cuisine.into(),
            x,
            y,
            price: [5 * mrng.random_range(MEALS.0 / 5..=MEALS.1 / 5); 3],
            interest: r2(mrng.random_range(INTEREST.0..=INTEREST.1)),
            about: format!("Serves {cuisine}; groups are welcome with a booking."),
        });
    }
    let mut pts: Vec<(f64, f64)> = vec![(0.0, 0.0)];
    pts.extend(sites.iter().chain(&restaurants).map(|p| (p.x, p.y)));
    let roads = spanning_tree(&pts)
        .into_iter()
        .map(|(a, b)| {
            let (dx, dy) = (pts[a].0 - pts[b].0, pts[a].1 - pts[b].1);
            let straight = (dx * dx + dy * dy).sqrt();
            (a, b, r2(straight * mrng.random_range(1.05..=1.35)).max(0.1))
        })
        .collect();
    (sites, restaurants, roads)
}

/// The latest return to the office over every itinerary on a map.
fn latest_return(
    sites: &[Place],
    restaurants: &[Place],
    roads: &[(usize, usize, f64)],
) -> Result<u32, String> {
    let name = |k: usize| -> String {
        if k == 0 {
            "Office".into()
        } else if k <= sites.len() {
            sites[k - 1].name.clone()
        } else {
            restaurants[k - 1 - sites.len()].name.clone()
        }
    };
    let map = OutingMap {
        base: name(0),
        sites: sites
            .iter()
            .map(|x| (x.name.clone(), x.price[0], x.interest))
            .collect(),
        restaurants: restaurants
            .iter()
            .map(|x| (x.name.clone(), x.price[0], x.interest))
            .collect(),
        roads: roads
            .iter()
            .map(|(a, b, km)| (name(*a), name(*b), *km))
            .collect(),
        depart: DEPART.into(),
        speed_kmh: SPEED,
        stays: STAYS,
    };
    Ok(outings(&map)?.iter().map(|o| o.back).max().unwrap_or(0))
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("event/params");
    let level = match p.level {
        Some(l) => {
            if let Some(e) = inconsistent(l, p) {
                return Err(format!("event_planning parameters: {e}"));
            }
            l
        }
        None => {
            let ok: Vec<Level> = LEVELS
                .iter()
                .copied()
                .filter(|l| inconsistent(*l, p).is_none())
                .collect();
            if ok.is_empty() {
                return Err("event_planning parameters fit no level (plan is for A, mode for C, end_time for A4/B4)".into());
            }
            ok[rng.random_range(0..ok.len())]
        }
    };
    let dept = match &p.department {
        Some(d) => *DEPARTMENTS
            .iter()
            .find(|x| x.eq_ignore_ascii_case(d.trim()))
            .ok_or_else(|| {
                format!(
                    "unknown department `{d}`; expected one of: {}",
                    DEPARTMENTS.join(", ")
                )
            })?,
        None => DEPARTMENTS[rng.random_range(0..DEPARTMENTS.len())],
    };
    let n_loc = p.n_loc.unwrap_or(6);
    let n_res = p.n_res.unwrap_or(10);
    if !(3..=12).contains(&n_loc) || !(1..=20).contains(&n_res) {
        return Err(format!(
            "event_planning parameters out of range: n_loc {n_loc} (3-12), n_res {n_res} (1-20)"
        ));
    }
    let (letter, num) = (level.letter(), level.number());
    let mode = (letter == 'C').then(|| MODES[usize::from(num) - 1]);
    let metrics: Vec<OutingMetric> = match (&p.metrics, letter, num) {
        (_, 'C', _) => Vec::new(),
        (Some(ms), _, _) => ms.clone(),
        (None, _, 1) => {
            let k = rng.random_range(1..=2);
            let mut v: Vec<OutingMetric> = pick_distinct(&mut rng, 3, k)
                .into_iter()
                .map(|i| THREE[i])
                .collect();
            v.sort();
            v
        }
        (None, _, 2) => {
            let k = rng.random_range(2..=3);
            let mut v: Vec<OutingMetric> = pick_distinct(&mut rng, 3, k)
                .into_iter()
                .map(|i| THREE[i])
                .collect();
            v.sort();
            v
        }
        (None, _, _) => vec![
            OutingMetric::Interest,
            OutingMetric::Cost,
            OutingMetric::Distance,
            OutingMetric::Score,
        ],
    };

    // The map; redrawn in the rare case that some itinerary would end after 22:00.
    let mut mrng = ctx.rng("event/map");
    let (sites, restaurants, roads) = {
        let mut attempt = 0;
        loop {
            let (sites, restaurants, roads) = draw_map(&mut mrng, n_loc, n_res);
            attempt += 1;
            let late = latest_return(&sites, &restaurants, &roads)?;
            if late < 22 * 60 || attempt >= 20 {
                if late >= 22 * 60 {
                    return Err("could not draw a map whose outings end before 22:00".into());
                }
                break (sites, restaurants, roads);
            }
        }
    };
    let base_name = "Office";
    let all_places: Vec<(&str, u8, f64, f64)> = std::iter::once((base_name, 0u8, 0.0, 0.0))
        .chain(sites.iter().map(|s| (s.name.as_str(), 1u8, s.x, s.y)))
        .chain(restaurants.iter().map(|r| (r.name.as_str(), 2u8, r.x, r.y)))
        .collect();

    // The month after the scenario's, one price period, a common window inside it.
    let (y, m) = {
        let mut parts = ctx.date.split('-');
        let y: i32 = parts
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or("bad date")?;
        let m: u32 = parts
            .next()
            .and_then(|v| v.parse().ok())
            .ok_or("bad date")?;
        if m == 12 { (y + 1, 1) } else { (y, m + 1) }
    };
    let last_day = days_in(y, m);
    let mut arng = ctx.rng("event/availability");
    let period = arng.random_range(0..3usize);
    let (p0, p1) = [(1, 10), (11, 20), (21, last_day)][period];
    let len = arng.random_range(1..=3u32);
    let s = arng.random_range(p0..=p1 + 1 - len);
    let e = s + len - 1;
    let date = |d: u32| format!("{y:04}-{m:02}-{d:02}");
    let members = ctx.company.department(dept);
    if members.is_empty() {
        return Err(format!("{dept} has no members"));
    }
    let mut chosen: Vec<usize> = if members.len() <= MAX_PARTICIPANTS {
        (0..members.len()).collect()
    } else {
        pick_distinct(&mut arng, members.len(), MAX_PARTICIPANTS)
    };
    chosen.sort();
    let participants: Vec<&tbsim_scenario::Person> = chosen.iter().map(|&i| members[i]).collect();
    let np = participants.len();
    let pin_start = arng.random_range(0..np);
    let pin_end = if np > 1 {
        (pin_start + arng.random_range(1..np)) % np
    } else {
        pin_start
    };
    // Every window contains the common one and stays inside the period; one starts
    // and another ends exactly on it, so the overlap of all is the common window.
    let windows: Vec<(u32, u32)> = (0..np)
        .map(|k| {
            let w = arng.random_range(len.max(3)..=7u32);
            if np == 1 {
                (s, e)
            } else if k == pin_start {
                (s, (s + w - 1).min(p1))
            } else if k == pin_end {
                ((e + 1).saturating_sub(w).max(p0), e)
            } else {
                let a = s.saturating_sub(arng.random_range(0..=w - len)).max(p0);
                (a, (a + w - 1).min(p1).max(e))
            }
        })
        .collect();
    let overlap = (
        windows.iter().map(|w| w.0).max().unwrap_or(s),
        windows.iter().map(|w| w.1).min().unwrap_or(e),
    );
    if overlap != (s, e) {
        return Err(format!(
            "availability overlap {overlap:?} differs from the common window ({s}, {e})"
        ));
    }
    let avail = availability_forms(ctx, &windows, (s, e), last_day);

    let map = OutingMap {
        base: base_name.into(),
        sites: sites
            .iter()
            .map(|x| (x.name.clone(), x.price[period], x.interest))
            .collect(),
        restaurants: restaurants
            .iter()
            .map(|x| (x.name.clone(), x.price[0], x.interest))
            .collect(),
        roads: roads
            .iter()
            .map(|(a, b, km)| {
                (
                    all_places[*a].0.to_owned(),
                    all_places[*b].0.to_owned(),
                    *km,
                )
            })
            .collect(),
        depart: DEPART.into(),
        speed_kmh: SPEED,
        stays: STAYS,
    };
    let table = outings(&map)?;
    let mut prng = ctx.rng("event/plan");
    let name_of = |o: &Outing| {
        (
            sites[o.morning].name.clone(),
            restaurants[o.lunch].name.clone(),
            sites[o.afternoon].name.clone(),
        )
    };
    // The itinerary the answer uses: given (A), the oracle's choice (B), or a best one (C).
    let chosen_outing: &Outing = match (letter, p.plan) {
        ('A', Some(pick)) => {
            if !(1..=n_loc).contains(&pick.morning)
                || !(1..=n_loc).contains(&pick.afternoon)
                || !(1..=n_res).contains(&pick.lunch)
                || pick.morning == pick.afternoon
            {
                return Err(format!(
                    "plan {pick:?} is not an itinerary: sites 1-{n_loc} (two different), restaurant 1-{n_res}"
                ));
            }
            table
                .iter()
                .find(|o| {
                    (o.morning + 1, o.lunch + 1, o.afternoon + 1)
                        == (pick.morning, pick.lunch, pick.afternoon)
                })
                .ok_or("the given itinerary is not feasible")?
        }
        ('A', None) => &table[prng.random_range(0..table.len())],
        ('B', _) => table
            .iter()
            .max_by(|a, b| a.score.total_cmp(&b.score))
            .ok_or("no itinerary")?,
        _ => {
            let metric = mode.map_or(OutingMetric::Score, Mode::metric);
            let better = |a: &&Outing, b: &&Outing| {
                let (x, y) = (a.metric(metric), b.metric(metric));
                if metric.higher_is_better() {
                    x.total_cmp(&y)
                } else {
                    y.total_cmp(&x)
                }
            };
            // max_by keeps the last of equals; reverse so the first best in list order wins.
            table.iter().rev().max_by(better).ok_or("no itinerary")?
        }
    };
    let (am, al, aa) = name_of(chosen_outing);
    let given = (letter == 'A').then(|| (am.clone(), al.clone(), aa.clone()));
    let with_end = letter != 'C' && num == 4;
    let limit = if with_end {
        Some(match &p.end_time {
            Some(t) => hhmm(parse_hhmm(t).ok_or_else(|| format!("end_time `{t}` is not HH:MM"))?),
            None if letter == 'A' => {
                let b = chosen_outing.back;
                if prng.random_bool(0.5) {
                    hhmm((b - 1) / 30 * 30)
                } else {
                    hhmm(b.div_ceil(30) * 30)
                }
            }
            None => {
                let lo = table.iter().map(|o| o.back).min().unwrap_or(0);
                let hi = table.iter().map(|o| o.back).max().unwrap_or(0);
                let slots: Vec<u32> = (lo.div_ceil(30)..=hi / 30).map(|k| k * 30).collect();
                hhmm(if slots.is_empty() {
                    hi.div_ceil(30) * 30
                } else {
                    slots[prng.random_range(0..slots.len())]
                })
            }
        })
    } else {
        None
    };

    // Files.
    let dslug = slug(dept).replace('-', "_");
    let folder = ctx.folder(&format!("drive/events/{dslug}_outing"));
    let guidelines = format!("{folder}/event_planning_guidelines.md");
    let info = format!("{folder}/places_info.txt");
    let map_png = format!("{folder}/road_map.png");
    let map_json = format!("{folder}/road_map.json");
    let signup = format!("{folder}/signup_sheet.txt");
    let out = if letter == 'C' {
        format!("workspace/dept_{dslug}_optimal_plan{}.json", ctx.suffix())
    } else {
        format!("workspace/dept_{dslug}_plan_metrics{}.json", ctx.suffix())
    };
    let month = format!("{} {y}", super::MONTHS[m as usize - 1]);
    let mut places_txt = format!(
        "Places for the {dept} team outing ({month})\nLocations are directions from the office; travel follows the roads on the road map. Interest is rated out of ten.\n\nSITES\n"
    );
    for (k, s) in sites.iter().enumerate() {
        let ticket = if s.price[0] == s.price[1] && s.price[1] == s.price[2] {
            format!("{} per person, all month", s.price[0])
        } else {
            format!(
                "early month (1st to 10th) {}, mid month (11th to 20th) {}, late month (21st to month end) {} per person",
                s.price[0], s.price[1], s.price[2]
            )
        };
        let _ = write!(
            places_txt,
            "{}. {} ({})\n   Location: {}\n   Ticket: {ticket}\n   Interest: {:.2}\n   About: {}\n\n",
            k + 1,
            s.name,
            s.kind,
            location(s.x, s.y),
            s.interest,
            s.about
        );
    }
    places_txt.push_str("RESTAURANTS\n");
    for (k, r) in restaurants.iter().enumerate() {
        let _ = write!(
            places_txt,
            "{}. {} ({})\n   Location: {}\n   Average price: {} per person\n   Interest: {:.2}\n   About: {}\n\n",
            k + 1,
            r.name,
            r.kind,
            location(r.x, r.y),
            r.price[0],
            r.interest,
            r.about
        );
    }
    let node_id = |k: usize| -> String {
        match all_places[k].1 {
            0 => "office".to_owned(),
            1 => format!("site:{}", slug(all_places[k].0)),
            _ => format!("restaurant:{}", slug(all_places[k].0)),
        }
    };
    let kinds = ["office", "site", "restaurant"];
    let map_data = json!({
        "nodes": all_places.iter().enumerate().map(|(k, pl)| json!({
            "id": node_id(k),
            "type": kinds[usize::from(pl.1)],
            "name": pl.0,
        })).collect::<Vec<_>>(),
        "roads": roads.iter().map(|(a, b, km)| json!({"from": node_id(*a), "to": node_id(*b), "km": km})).collect::<Vec<_>>(),
        "meta": {"speed_kmh": SPEED, "note": "Roads are two-way. Travel between places follows the shortest route along the roads."},
    });
    let mut signup_txt =
        format!("Team outing sign-up: {dept}\n\nThe following people have signed up:\n");
    for person in &participants {
        let _ = writeln!(signup_txt, "- {} ({})", person.name, person.position);
    }
    let _ = writeln!(
        signup_txt,
        "\nPlease agree a date with everyone before booking anything."
    );
    let files = vec![
        FileSpec {
            path: guidelines.clone(),
            content: Content::Text(corpus::fill(
                GUIDELINES,
                &[
                    ("company", corpus::COMPANY),
                    ("depart", DEPART),
                    ("stay_morning", &STAYS.0.to_string()),
                    ("stay_lunch", &STAYS.1.to_string()),
                    ("stay_afternoon", &STAYS.2.to_string()),
                    ("speed", &SPEED.to_string()),
                ],
            )),
        },
        FileSpec {
            path: info.clone(),
            content: Content::Text(places_txt),
        },
        FileSpec {
            path: map_png.clone(),
            content: Content::Drawing(map_drawing(&all_places, &roads)),
        },
        FileSpec {
            path: map_json.clone(),
            content: Content::Text(serde_json::to_string_pretty(&map_data).unwrap_or_default()),
        },
        FileSpec {
            path: signup.clone(),
            content: Content::Text(signup_txt),
        },
    ];

    // Clues: each participant knows their own window.
    let task = ctx.task_key();
    let mut clues = Vec::new();
    let mut clue_keys = Vec::new();
    let mut sends = Vec::new();
    let mut reads = Vec::new();
    for (person, form) in participants.iter().zip(&avail) {
        let key = format!("clue/{}/{}", ctx.id, slug(&person.name));
        clues.push((person.key.clone(), Clue {
            key: key.clone(),
            task: Some(task.clone()),
            trigger: vec![
                ["team building", "team event", "outing", "offsite", "event", "day out", "trip", "excursion", "get-together", "activity", "team day"].iter().map(|s| (*s).to_owned()).collect(),
                ["available", "availability", "free", "when", "date", "day", "schedule", "calendar", "work", "suit", "prefer", "possible", "busy", "away", "holiday", "leave", "off", "join", "come", "make it", "week"].iter().map(|s| (*s).to_owned()).collect(),
            ],
            after: vec![Condition::Released(task.clone())],
            response: format!(
                "Thanks for organising the team outing! {} The planning materials are on the shared drive in `{folder}/`.",
                form.say(&month, &date)
            ),
        }));
        clue_keys.push(key);
        sends.push(step(
            "send_message",
            json!({"to": person.key, "text": format!("Hi {}, I'm planning the {dept} team-building outing in {month}. Which days are you available?", person.name)}),
        ));
        let mut read = step("read_messages", json!({"with": person.key}));
        read.gate = Gate::ReplyFrom(person.key.clone());
        reads.push(read);
    }

    // The answer.
    let mut answer = json!({
        "event_date": date(s),
        "plan": {"morning": am, "lunch": al, "afternoon": aa},
    });
    let value = |metric: OutingMetric| -> serde_json::Value {
        let v = chosen_outing.metric(metric);
        match metric {
            OutingMetric::Score => json!((v * 10_000.0).round() / 10_000.0),
            OutingMetric::Cost => json!(v.round() as i64),
            _ => json!(r2(v)),
        }
    };
    let reported: Vec<OutingMetric> = match mode {
        Some(md) => vec![md.metric()],
        None => metrics.clone(),
    };
    answer["metrics"] = serde_json::Value::Object(
        reported
            .iter()
            .map(|mt| (mt.key().to_owned(), value(*mt)))
            .collect(),
    );
    if let Some(lim) = &limit {
        answer["end_time"] = json!(hhmm(chosen_outing.back));
        answer["can_complete_on_time"] = json!(chosen_outing.back <= parse_hhmm(lim).unwrap_or(0));
    }
    let mut plan = vec![step("read_file", json!({"path": signup}))];
    plan.extend(sends);
    plan.push(step("read_file", json!({"path": guidelines})));
    plan.push(step("read_file", json!({"path": info})));
    plan.push(step("read_file", json!({"path": map_json})));
    plan.extend(reads);
    plan.push(step(
        "write_file",
        json!({"path": out, "content": serde_json::to_string_pretty(&answer).unwrap_or_default()}),
    ));

    // Checkpoints.
    let outing_check = |aspect: OutingAspect| {
        Check::Domain(Box::new(DomainCheck::Outing(OutingCheck {
            path: out.clone(),
            aspect,
            given: given.clone(),
            map: map.clone(),
        })))
    };
    let mut checkpoints = vec![
        CheckpointSpec {
            key: "materials_read".into(),
            description: "Read the planning guidelines and the places list".into(),
            weight: 1,
            check: Check::All(vec![Check::Consulted(guidelines.clone()), Check::Consulted(info.clone())]),
            feedback: format!("The planning guidelines or the places list were not read; both are in `{folder}/`."),
        },
        CheckpointSpec {
            key: "availability_asked".into(),
            description: "Every participant told you when they are free".into(),
            weight: 1,
            check: Check::Disclosed(clue_keys),
            feedback: "Not everyone on the sign-up sheet was asked about their availability. Message each participant about the team-building outing and ask which days they are free.".into(),
        },
        CheckpointSpec {
            key: "event_date".into(),
            description: "`event_date` is a day when every participant is free".into(),
            weight: 1,
            check: Check::Domain(Box::new(DomainCheck::DateIn {
                path: out.clone(),
                pointer: "/event_date".into(),
                first: date(s),
                last: date(e),
            })),
            feedback: "`event_date` is missing or not a day when every participant is free. Collect everyone's availability and choose a date inside the overlap of all their windows, written YYYY-MM-DD.".into(),
        },
    ];
    let metric_feedback = |mt: OutingMetric| match mt {
        OutingMetric::Interest => "add the interest ratings of the three places",
        OutingMetric::Cost => {
            "add both tickets at the price for the event date's period and the restaurant's price"
        }
        OutingMetric::Distance => {
            "add the four legs, each the shortest route along the roads on the map, including the way back"
        }
        OutingMetric::Score => {
            "normalise cost, interest and distance over every possible itinerary as the guidelines describe"
        }
    };
    let tolerance = |mt: OutingMetric| match mt {
        OutingMetric::Interest => 0.01,
        OutingMetric::Cost => 0.5,
        // Sums of road lengths in hundredths: exact at two decimals.
        OutingMetric::Distance => 0.01,
        OutingMetric::Score => 0.001,
    };
    match mode {
        None => {
            // At A levels the itinerary is given in the brief, so repeating it proves
            // nothing; only B levels, where the agent proposes one, score `plan`.
            if letter != 'A' {
                checkpoints.push(CheckpointSpec {
                    key: "plan".into(),
                    description: "`plan` is a feasible itinerary".into(),
                    weight: 1,
                    check: outing_check(OutingAspect::Plan),
                    feedback: "`plan` is missing or not a feasible itinerary: it needs a morning site, a restaurant and a different afternoon site, named exactly as in the places list.".into(),
                });
            }
            for mt in &metrics {
                checkpoints.push(CheckpointSpec {
                    key: format!("metric_{}", mt.key()),
                    description: format!("`metrics.{}` is right for the itinerary", mt.key()),
                    weight: 1,
                    check: outing_check(OutingAspect::Metric {
                        metric: *mt,
                        tolerance: tolerance(*mt),
                    }),
                    feedback: format!(
                        "`metrics.{}` is missing or wrong for the itinerary: {}.",
                        mt.key(),
                        metric_feedback(*mt)
                    ),
                });
            }
            if let Some(lim) = &limit {
                // The flag alone is a coin toss (or always true when the agent picks
                // its own itinerary), so it is judged together with the return time it
                // follows from.
                checkpoints.push(CheckpointSpec {
                    key: "end_time".into(),
                    description: format!("`end_time` is the itinerary's return time (within 3 minutes) and `can_complete_on_time` says whether that is by {lim}"),
                    weight: 1,
                    check: Check::All(vec![
                        outing_check(OutingAspect::EndTime { minutes: 3 }),
                        outing_check(OutingAspect::OnTime { limit: lim.clone() }),
                    ]),
                    feedback: "`end_time` is off by more than 3 minutes, or `can_complete_on_time` is wrong or missing. Follow the guidelines' timetable: departure, each leg's travel time rounded up to whole minutes, the three stays, and the way back; then compare that return time with the time in your brief (true when it is back by then).".into(),
                });
            }
        }
        Some(md) => {
            let mt = md.metric();
            checkpoints.push(CheckpointSpec {
                key: "plan_optimal".into(),
                description: format!("`plan` is an itinerary with {}", md.words()),
                weight: 2,
                check: outing_check(OutingAspect::Optimal { metric: mt }),
                feedback: format!("`plan` is missing, infeasible or not an itinerary with {}. Compare every itinerary: every ordered pair of two different sites with every restaurant.", md.words()),
            });
            checkpoints.push(CheckpointSpec {
                key: format!("metric_{}", mt.key()),
                description: format!("`metrics.{}` is right for the itinerary", mt.key()),
                weight: 1,
                check: outing_check(OutingAspect::Metric {
                    metric: mt,
                    tolerance: tolerance(mt),
                }),
                feedback: format!(
                    "`metrics.{}` is missing or wrong for your itinerary: {}.",
                    mt.key(),
                    metric_feedback(mt)
                ),
            });
        }
    }

    let metric_list = reported
        .iter()
        .map(|mt| format!("`{}`", mt.key()))
        .collect::<Vec<_>>()
        .join(", ");
    let what = match (letter, mode) {
        ('A', _) => format!(
            "work out these metrics of the itinerary we have in mind (morning at {am}, lunch at {al}, afternoon at {aa}): {metric_list}"
        ),
        ('B', _) => format!(
            "propose an itinerary (a morning site, a lunch restaurant and a different afternoon site) and work out its metrics: {metric_list}"
        ),
        (_, Some(md)) => format!(
            "find the itinerary with {} and report it with its {metric_list}",
            md.words()
        ),
        _ => String::new(),
    };
    let deadline_text = match &limit {
        Some(lim) => format!(
            " Also say when the group gets back to the office (`end_time`, HH:MM) and whether it is back by {lim} (`can_complete_on_time`, true or false)."
        ),
        None => String::new(),
    };
    let mut shape = format!(
        "{{\"event_date\": \"YYYY-MM-DD\", \"plan\": {{\"morning\": ..., \"lunch\": ..., \"afternoon\": ...}}, \"metrics\": {{{}}}",
        reported
            .iter()
            .map(|mt| format!("\"{}\": ...", mt.key()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if limit.is_some() {
        shape.push_str(", \"end_time\": \"HH:MM\", \"can_complete_on_time\": ...");
    }
    shape.push('}');
    let third_hint = match letter {
        'A' => {
            "Trace the given itinerary leg by leg along the roads; ticket prices depend on the period of the month your date falls in."
        }
        'B' => {
            "Any itinerary with two different sites will do; compute its metrics leg by leg along the roads, with ticket prices for your date's period."
        }
        _ => {
            "List every itinerary (ordered pairs of different sites with every restaurant), compute the metric for each and keep a best one; ties are fine."
        }
    };
    let spec = ctx
        .task_spec::<super::meta_task::EventPlanning>(format!("event_planning/{}", level.key()))
        .key(task.clone())
        .title(format!("Plan the {dept} team outing"))
        .objective(format!(
            "In {month} we are taking the {dept} department on a team-building day out. The people who signed up are listed in `{signup}`. First ask each of them which days they are free that month and choose a date that suits everyone. Then use the planning materials in `{folder}/` (guidelines, places list, road map) to {what}.{deadline_text} Save `{out}` as {shape}."
        ))
        .checkpoints(checkpoints)
        .hints(vec![
            "Everyone on the sign-up sheet knows their own availability; ask each of them about the team-building outing.".into(),
            "The guidelines define the day's timetable, the travel times (rounded up to whole minutes) and every metric; distances follow the roads on the map.".into(),
            third_hint.into(),
        ])
        .plan(plan, np)
        .build();
    Ok(Parts {
        tasks: vec![spec],
        files,
        meetings: Vec::new(),
        clues,
        ..Default::default()
    })
}

/// "Every candidate listed" answers: every day of the month and every place at once.
pub fn wrong_answers(task: &TaskSpec, _scenario: &Scenario) -> Vec<(String, String)> {
    let Some(o) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::Domain(d) => match d.as_ref() {
            DomainCheck::Outing(o) => Some(o),
            _ => None,
        },
        _ => None,
    }) else {
        return Vec::new();
    };
    let Some((first, _)) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::Domain(d) => match d.as_ref() {
            DomainCheck::DateIn { first, last, .. } => Some((first.clone(), last.clone())),
            _ => None,
        },
        _ => None,
    }) else {
        return Vec::new();
    };
    let month = &first[..7];
    let days: Vec<String> = (1..=31).map(|d| format!("{month}-{d:02}")).collect();
    let sites: Vec<&str> = o.map.sites.iter().map(|s| s.0.as_str()).collect();
    let rests: Vec<&str> = o.map.restaurants.iter().map(|s| s.0.as_str()).collect();
    let metrics = json!({"interest": 0, "cost": 0, "distance": 0, "score": 0});
    vec![
        (
            o.path.clone(),
            json!({"event_date": days, "plan": {"morning": sites, "lunch": rests, "afternoon": sites}, "metrics": metrics, "end_time": "", "can_complete_on_time": [true, false]}).to_string(),
        ),
        (
            o.path.clone(),
            json!({"event_date": days.join(", "), "plan": {"morning": sites.join(", "), "lunch": rests.join(", "), "afternoon": sites.join(", ")}, "metrics": metrics}).to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_name_their_rules() {
        assert_eq!(Level::A1.key(), "a1");
        assert_eq!((Level::B4.letter(), Level::B4.number()), ('B', 4));
        assert_eq!((Level::C3.letter(), Level::C3.number()), ('C', 3));
        let p = |f: fn(&mut Params)| {
            let mut p = Params::default();
            f(&mut p);
            p
        };
        assert!(
            inconsistent(
                Level::A1,
                &p(|p| p.metrics = Some(vec![OutingMetric::Cost]))
            )
            .is_none()
        );
        assert!(
            inconsistent(
                Level::A1,
                &p(|p| p.metrics = Some(vec![OutingMetric::Score]))
            )
            .is_some()
        );
        assert!(
            inconsistent(
                Level::A2,
                &p(|p| p.metrics = Some(vec![OutingMetric::Cost]))
            )
            .is_some()
        );
        assert!(
            inconsistent(
                Level::B3,
                &p(|p| p.metrics = Some(vec![OutingMetric::Cost; 4]))
            )
            .is_some()
        );
        assert!(
            inconsistent(
                Level::B1,
                &p(|p| p.plan = Some(PlanPick {
                    morning: 1,
                    lunch: 1,
                    afternoon: 2
                }))
            )
            .is_some()
        );
        assert!(inconsistent(Level::C2, &p(|p| p.mode = Some(Mode::LowestCost))).is_none());
        assert!(inconsistent(Level::C2, &p(|p| p.mode = Some(Mode::HighestScore))).is_some());
        assert!(inconsistent(Level::A3, &p(|p| p.end_time = Some("18:00".into()))).is_some());
        assert!(inconsistent(Level::B4, &p(|p| p.end_time = Some("18:00".into()))).is_none());
    }

    #[test]
    fn the_spanning_tree_connects_everything_with_the_shortest_edges() {
        let pts = [(0.0, 0.0), (1.0, 0.0), (5.0, 0.0), (1.0, 1.0), (5.0, 2.0)];
        let mut t = spanning_tree(&pts);
        t.sort();
        assert_eq!(t, vec![(0, 1), (1, 2), (1, 3), (2, 4)]);
    }
}
