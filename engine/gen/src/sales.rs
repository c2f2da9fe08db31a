//! Sales analysis: quarterly figures of the sales teams from their order exports.
//!
//! Three sales teams (North, East, West; the reference's `Sales_1`..`Sales_3`,
//! accepted as aliases) export their orders per quarter as CSV files on the drive:
//! order id, date, representative, team and amount. Representatives join and leave
//! during the year, and some orders are cancelled: those are listed, for all teams
//! together, in each quarter's cancellation log, joined to the exports by order id. The Sales team's
//! analysis handbook fixes the rules (cancelled orders never count; only active
//! representatives count; averages per active representative; quarter-over-quarter
//! changes only for people active in both quarters). The nine request types of the
//! reference are kept, with their top/bottom and up/down splits (13 variants); the
//! expected answer is computed at generation time by [`solve`] from the CSV text
//! itself, and lives only in the checkpoints.
//!
//! Differences from the reference: the sales handbook is on the drive and every
//! Sales colleague points to it when asked (the reference's handbook was never
//! copied and its NPC hint matched no department, capping every instance at 70%);
//! the year (the one before the scenario's) and the quarter come from the scenario
//! clock and the seeded streams, never the unseeded global RNG; the data is
//! redrawn until the answer is unambiguous and not trivially guessable (no tied
//! totals, at least four active people per team and quarter, quarter-over-quarter
//! counts strictly between none and everyone); cancelled orders (in every export
//! one representative has all their orders cancelled, and no row says so: only
//! the log does) and joiners/leavers make the handbook matter; quarter-over-quarter requests also ask
//! for the people (or teams) counted, so a guessed count is not enough, and so does
//! the headcount of `sales_statistics` (a team has four to seven active people); the
//! reference's separate "validity" checkpoint is subsumed by the exact record match
//! (an outsider fails it); per-team averages are scored per team; a missing key or
//! a non-numeric value fails a checkpoint instead of crashing the evaluator.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::{Check, CheckpointSpec, Clue, Content, FileSpec, Gate, Record, TaskSpec};

/// The handbook's drive path.
pub const HANDBOOK: &str = "drive/sales/handbook/sales_analysis_handbook.md";
const HANDBOOK_TEXT: &str = include_str!("corpus/sales/sales_analysis_handbook.md");
/// The sales teams.
pub const TEAMS: [&str; 3] = ["North", "East", "West"];
/// Tolerance for money, in dollars (the reference's).
const TOLERANCE: f64 = 0.05;

/// The request types (named as in the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The top seller of one team.
    TopSalesEmployee,
    /// Headcount, total and average of one team.
    SalesStatistics,
    /// The top or bottom seller across several teams.
    CrossDeptsExtremeEmployee,
    /// The top or bottom seller of each of several teams.
    PerDeptExtremeEmployee,
    /// The average per active representative of each of several teams.
    PerDeptAvgSales,
    /// The top N of each of several teams.
    PerDeptTopN,
    /// The top N across several teams.
    CrossDeptsTopN,
    /// How many people of one team went up (or down) from the previous quarter.
    DeptPersonQoqCount,
    /// How many teams went up (or down) from the previous quarter.
    AllDeptsQoqCount,
}

const KINDS: [Kind; 9] = [
    Kind::TopSalesEmployee,
    Kind::SalesStatistics,
    Kind::CrossDeptsExtremeEmployee,
    Kind::PerDeptExtremeEmployee,
    Kind::PerDeptAvgSales,
    Kind::PerDeptTopN,
    Kind::CrossDeptsTopN,
    Kind::DeptPersonQoqCount,
    Kind::AllDeptsQoqCount,
];

impl Kind {
    fn key(self) -> &'static str {
        match self {
            Kind::TopSalesEmployee => "top_sales_employee",
            Kind::SalesStatistics => "sales_statistics",
            Kind::CrossDeptsExtremeEmployee => "cross_depts_extreme_employee",
            Kind::PerDeptExtremeEmployee => "per_dept_extreme_employee",
            Kind::PerDeptAvgSales => "per_dept_avg_sales",
            Kind::PerDeptTopN => "per_dept_top_n",
            Kind::CrossDeptsTopN => "cross_depts_top_n",
            Kind::DeptPersonQoqCount => "dept_person_qoq_count",
            Kind::AllDeptsQoqCount => "all_depts_qoq_count",
        }
    }
    fn one_team(self) -> bool {
        matches!(
            self,
            Kind::TopSalesEmployee | Kind::SalesStatistics | Kind::DeptPersonQoqCount
        )
    }
    fn many_teams(self) -> bool {
        !self.one_team() && self != Kind::AllDeptsQoqCount
    }
    fn moded(self) -> bool {
        matches!(
            self,
            Kind::CrossDeptsExtremeEmployee | Kind::PerDeptExtremeEmployee
        )
    }
    fn directed(self) -> bool {
        matches!(self, Kind::DeptPersonQoqCount | Kind::AllDeptsQoqCount)
    }
    fn ranked(self) -> bool {
        matches!(self, Kind::PerDeptTopN | Kind::CrossDeptsTopN)
    }
}

/// Top or bottom seller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Highest total.
    Top,
    /// Lowest total.
    Bottom,
}

/// Quarter-over-quarter direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Sales grew.
    Up,
    /// Sales fell.
    Down,
}

/// Parameters; unset ones are drawn uniformly from the reference's space.
/// Parameters that do not apply to the request type are an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Request type.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// The team, for single-team types (`North`, `East`, `West`, or `Sales_1`..`Sales_3`).
    #[serde(default)]
    pub department: Option<String>,
    /// 2-3 distinct teams, for multi-team types.
    #[serde(default)]
    pub departments: Option<Vec<String>>,
    /// Top or bottom, for the extreme-employee types.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// Up or down, for the quarter-over-quarter types.
    #[serde(default)]
    pub direction: Option<Direction>,
    /// Quarter of last year: 1-4, or 2-4 for the quarter-over-quarter types.
    #[serde(default)]
    pub quarter: Option<u8>,
    /// N for the top-N types (1-3).
    #[serde(default)]
    pub n: Option<u8>,
}

/// The variants: the 9 types, split by mode and direction where they have one (13).
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for kind in KINDS {
        let base = Params {
            kind: Some(kind),
            ..Params::default()
        };
        if kind.moded() {
            for (m, mode) in [("top", Mode::Top), ("bottom", Mode::Bottom)] {
                v.push((
                    format!("sales/{}/{m}", kind.key()),
                    Params {
                        mode: Some(mode),
                        ..base.clone()
                    },
                ));
            }
        } else if kind.directed() {
            for (d, dir) in [("up", Direction::Up), ("down", Direction::Down)] {
                v.push((
                    format!("sales/{}/{d}", kind.key()),
                    Params {
                        direction: Some(dir),
                        ..base.clone()
                    },
                ));
            }
        } else {
            v.push((format!("sales/{}", kind.key()), base));
        }
    }
    v
}

fn team_index(name: &str) -> Result<usize, String> {
    let n = name.trim();
    if let Some(i) = TEAMS.iter().position(|t| t.eq_ignore_ascii_case(n)) {
        return Ok(i);
    }
    // The reference's department names.
    match n.to_ascii_lowercase().as_str() {
        "sales_1" => Ok(0),
        "sales_2" => Ok(1),
        "sales_3" => Ok(2),
        _ => Err(format!(
            "sales: unknown team `{n}`; teams: {} (or Sales_1..Sales_3)",
            TEAMS.join(", ")
        )),
    }
}

// ---------------------------------------------------------------------------
// Data

/// One row of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Representative's ID.
    pub employee_id: String,
    /// Representative's name.
    pub name: String,
    /// Amount in cents.
    pub cents: u64,
    /// Whether the order was cancelled.
    pub cancelled: bool,
}

/// Parses an export (the format [`render_csv`] writes), marking as cancelled the
/// rows whose order ID is in `cancelled` (the quarter's cancellation log, read by
/// [`parse_cancellations`]). Malformed lines are skipped.
pub fn parse_csv(text: &str, cancelled: &BTreeSet<u32>) -> Vec<Row> {
    tbsim_scenario::check::parse_csv(text)
        .unwrap_or_default()
        .into_iter()
        .skip(1)
        .filter_map(|f| {
            if f.len() != 6 {
                return None;
            }
            let order: u32 = f[0].parse().ok()?;
            let (whole, frac) = f[5].split_once('.')?;
            let cents = whole.parse::<u64>().ok()? * 100 + frac.parse::<u64>().ok()?;
            Some(Row {
                employee_id: f[2].clone(),
                name: f[3].clone(),
                cents,
                cancelled: cancelled.contains(&order),
            })
        })
        .collect()
}

/// The order IDs of a cancellation log (the format [`render_cancellations`] writes).
pub fn parse_cancellations(text: &str) -> BTreeSet<u32> {
    tbsim_scenario::check::parse_csv(text)
        .unwrap_or_default()
        .into_iter()
        .skip(1)
        .filter_map(|f| f.first()?.parse().ok())
        .collect()
}

/// Why customers withdraw orders (the log's `reason` column; never read by the rules).
const REASONS: [&str; 6] = [
    "customer withdrew",
    "duplicate entry",
    "credit check failed",
    "pricing error",
    "out of stock",
    "customer changed supplier",
];

/// Renders a quarter's cancellation log: `(order_id, cancelled_on, reason)` rows.
pub fn render_cancellations(rows: &[(u32, String, &str)]) -> String {
    let mut csv = String::from("order_id,cancelled_on,reason\n");
    for (id, date, reason) in rows {
        let _ = writeln!(csv, "{id},{date},{reason}");
    }
    csv
}

/// The date `days` after `(year, month, day)`, as `YYYY-MM-DD`.
fn date_after(year: i32, month: u32, day: u32, days: u32) -> String {
    let (mut y, mut m, mut d) = (year, month, day + days);
    while d > days_in_month(y, m) {
        d -= days_in_month(y, m);
        m += 1;
        if m > 12 {
            m = 1;
            y += 1;
        }
    }
    format!("{y:04}-{m:02}-{d:02}")
}

struct Rep {
    id: String,
    name: String,
    team: usize,
    skill: f64,
    /// Quarters (0-based) the person works in.
    quarters: std::ops::RangeInclusive<usize>,
}

struct Order {
    id: u32,
    date: (u32, u32),
    rep: usize,
    cents: u64,
    cancelled: bool,
}

fn days_in_month(y: i32, m: u32) -> u32 {
    tbsim_scenario::date::Date::new(y, m, 1).map_or(28, |d| d.days_in_month())
}

fn normal(rng: &mut StreamRng) -> f64 {
    let u1: f64 = rng.random_range(1e-12..1.0);
    let u2: f64 = rng.random_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Draws the year's orders: `orders[team][quarter]`.
fn draw(
    rng: &mut StreamRng,
    year: i32,
    taken: &BTreeSet<String>,
) -> (Vec<Rep>, Vec<Vec<Vec<Order>>>) {
    let combos = corpus::GIVEN_NAMES.len() * corpus::FAMILY_NAMES.len();
    let mut reps: Vec<Rep> = Vec::new();
    let mut names = taken.clone();
    let mut ids = BTreeSet::new();
    for team in 0..TEAMS.len() {
        let size = rng.random_range(5..=7usize);
        for _ in 0..size {
            let name = loop {
                let k = rng.random_range(0..combos);
                let n = format!(
                    "{} {}",
                    corpus::GIVEN_NAMES[k / corpus::FAMILY_NAMES.len()],
                    corpus::FAMILY_NAMES[k % corpus::FAMILY_NAMES.len()]
                );
                if names.insert(n.clone()) {
                    break n;
                }
            };
            let id = loop {
                let id = format!("SR-{}", rng.random_range(1000..10_000u32));
                if ids.insert(id.clone()) {
                    break id;
                }
            };
            let roll = rng.random_range(0..100u32);
            let quarters = if roll < 18 {
                rng.random_range(1..=3usize)..=3
            } else if roll < 32 {
                0..=rng.random_range(0..=2usize)
            } else {
                0..=3
            };
            reps.push(Rep {
                id,
                name,
                team,
                skill: (0.35 * normal(rng)).exp(),
                quarters,
            });
        }
    }
    let mut order_ids = BTreeSet::new();
    let mut orders: Vec<Vec<Vec<Order>>> = (0..TEAMS.len())
        .map(|_| (0..4).map(|_| Vec::new()).collect())
        .collect();
    for (r, rep) in reps.iter().enumerate() {
        for q in rep.quarters.clone() {
            let months: Vec<u32> = (0..3).map(|k| 3 * q as u32 + 1 + k).collect();
            let days: u32 = months.iter().map(|m| days_in_month(year, *m)).sum();
            // Each person has their own pace this quarter, so totals move between quarters.
            let pace = rng.random_range(0.7..1.3);
            for _ in 0..rng.random_range(2..=8u32) {
                let mut d = rng.random_range(0..days);
                let mut month = months[0];
                for m in &months {
                    let n = days_in_month(year, *m);
                    if d < n {
                        month = *m;
                        break;
                    }
                    d -= n;
                }
                let amount = (8.1 + 0.5 * normal(rng)).exp() * rep.skill * pace;
                let cents = ((amount * 100.0).round() as u64).max(15_000);
                let id = loop {
                    let id = rng.random_range(100_000..1_000_000u32);
                    if order_ids.insert(id) {
                        break id;
                    }
                };
                orders[rep.team][q].push(Order {
                    id,
                    date: (month, d + 1),
                    rep: r,
                    cents,
                    cancelled: rng.random_bool(0.08),
                });
            }
        }
    }
    // In every export one representative has every order cancelled, so the
    // handbook's first rule always changes who counts: listing every ID of the
    // team's export was the whole headcount in about half the instances, which a
    // set written from the export's surface reproduced (issue 37). Who it is, is
    // drawn among the export's people whatever their number of orders.
    for team in &mut orders {
        for q in team.iter_mut() {
            let people: BTreeSet<usize> = q.iter().map(|o| o.rep).collect();
            if !people.is_empty()
                && !people
                    .iter()
                    .any(|r| q.iter().all(|o| o.rep != *r || o.cancelled))
            {
                let people: Vec<usize> = people.into_iter().collect();
                let out = people[rng.random_range(0..people.len())];
                for o in q.iter_mut().filter(|o| o.rep == out) {
                    o.cancelled = true;
                }
            }
            q.sort_by_key(|o| (o.date, o.id));
        }
    }
    (reps, orders)
}

/// Renders one export. The status is not in it: cancellations are in the
/// quarter's cancellation log, joined by order ID (issue 37: a status word in the
/// rows let a surface rule drop the cancelled people without reading the handbook).
pub fn render_csv(rows: &[(u32, String, Row)], team: &str) -> String {
    let mut csv = String::from("order_id,date,employee_id,name,team,amount\n");
    for (id, date, r) in rows {
        let _ = writeln!(
            csv,
            "{id},{date},{},{},{team},{}.{:02}",
            r.employee_id,
            r.name,
            r.cents / 100,
            r.cents % 100,
        );
    }
    csv
}

// ---------------------------------------------------------------------------
// Solving

/// A person's quarter total.
#[derive(Debug, Clone, PartialEq)]
pub struct Total {
    /// ID.
    pub employee_id: String,
    /// Name.
    pub name: String,
    /// Booked sales in cents.
    pub cents: u64,
}

/// The handbook's per-person totals: booked orders only, active people only,
/// highest first (ties by ID).
pub fn totals(rows: &[Row]) -> Vec<Total> {
    let mut by: BTreeMap<&str, Total> = BTreeMap::new();
    for r in rows.iter().filter(|r| !r.cancelled) {
        by.entry(&r.employee_id)
            .or_insert_with(|| Total {
                employee_id: r.employee_id.clone(),
                name: r.name.clone(),
                cents: 0,
            })
            .cents += r.cents;
    }
    let mut v: Vec<Total> = by.into_values().collect();
    v.sort_by(|a, b| {
        b.cents
            .cmp(&a.cents)
            .then(a.employee_id.cmp(&b.employee_id))
    });
    v
}

/// The people with the highest (or lowest) total, ties included.
fn extreme(t: &[Total], mode: Mode) -> Vec<Total> {
    let best = match mode {
        Mode::Top => t.iter().map(|x| x.cents).max(),
        Mode::Bottom => t.iter().map(|x| x.cents).min(),
    };
    t.iter()
        .filter(|x| Some(x.cents) == best)
        .cloned()
        .collect()
}

/// An expected answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// A list of people.
    People(Vec<Total>),
    /// A list of people per team.
    PerTeam(Vec<(String, Vec<Total>)>),
    /// One team's statistics.
    Stats {
        /// Team.
        team: String,
        /// Active representatives.
        employees: usize,
        /// Their employee IDs, sorted.
        ids: Vec<String>,
        /// Total in cents.
        cents: u64,
    },
    /// Average per active representative (dollars) per team.
    Averages(Vec<(String, f64)>),
    /// A count and the members counted (IDs or team names) under `field`.
    Count {
        /// Field holding the members.
        field: &'static str,
        /// Members.
        members: Vec<String>,
    },
}

/// What a request asks, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// Type.
    pub kind: Kind,
    /// Target teams (indices into [`TEAMS`]); all teams for [`Kind::AllDeptsQoqCount`].
    pub teams: Vec<usize>,
    /// Quarter, 1-4.
    pub quarter: u8,
    /// Mode (extreme types).
    pub mode: Mode,
    /// Direction (quarter-over-quarter types).
    pub direction: Direction,
    /// N (top-N types).
    pub n: usize,
}

/// Solves a question over the exports, `sheets[team][quarter - 1]`.
pub fn solve(q: &Question, sheets: &[Vec<Vec<Row>>]) -> Answer {
    let qi = usize::from(q.quarter) - 1;
    let t = |team: usize, qi: usize| totals(&sheets[team][qi]);
    let name = |team: usize| TEAMS[team].to_owned();
    let grew = |before: u64, after: u64| match q.direction {
        Direction::Up => after > before,
        Direction::Down => after < before,
    };
    match q.kind {
        Kind::TopSalesEmployee => Answer::People(extreme(&t(q.teams[0], qi), Mode::Top)),
        Kind::SalesStatistics => {
            let tt = t(q.teams[0], qi);
            let mut ids: Vec<String> = tt.iter().map(|x| x.employee_id.clone()).collect();
            ids.sort();
            Answer::Stats {
                team: name(q.teams[0]),
                employees: tt.len(),
                ids,
                cents: tt.iter().map(|x| x.cents).sum(),
            }
        }
        Kind::CrossDeptsExtremeEmployee | Kind::CrossDeptsTopN => {
            let mut all: Vec<Total> = q.teams.iter().flat_map(|&d| t(d, qi)).collect();
            all.sort_by(|a, b| {
                b.cents
                    .cmp(&a.cents)
                    .then(a.employee_id.cmp(&b.employee_id))
            });
            if q.kind == Kind::CrossDeptsTopN {
                all.truncate(q.n);
                Answer::People(all)
            } else {
                Answer::People(extreme(&all, q.mode))
            }
        }
        Kind::PerDeptExtremeEmployee | Kind::PerDeptTopN => Answer::PerTeam(
            q.teams
                .iter()
                .map(|&d| {
                    let tt = t(d, qi);
                    let pick = if q.kind == Kind::PerDeptTopN {
                        tt.into_iter().take(q.n).collect()
                    } else {
                        extreme(&tt, q.mode)
                    };
                    (name(d), pick)
                })
                .collect(),
        ),
        Kind::PerDeptAvgSales => Answer::Averages(
            q.teams
                .iter()
                .map(|&d| {
                    let tt = t(d, qi);
                    let sum: u64 = tt.iter().map(|x| x.cents).sum();
                    (name(d), sum as f64 / 100.0 / tt.len().max(1) as f64)
                })
                .collect(),
        ),
        Kind::DeptPersonQoqCount => {
            let before: BTreeMap<String, u64> = t(q.teams[0], qi - 1)
                .into_iter()
                .map(|x| (x.employee_id, x.cents))
                .collect();
            let mut members: Vec<String> = t(q.teams[0], qi)
                .into_iter()
                .filter(|x| {
                    before
                        .get(&x.employee_id)
                        .is_some_and(|b| grew(*b, x.cents))
                })
                .map(|x| x.employee_id)
                .collect();
            members.sort();
            Answer::Count {
                field: "employee_ids",
                members,
            }
        }
        Kind::AllDeptsQoqCount => {
            let sum = |d: usize, qi: usize| t(d, qi).iter().map(|x| x.cents).sum::<u64>();
            Answer::Count {
                field: "teams",
                members: q
                    .teams
                    .iter()
                    .filter(|&&d| grew(sum(d, qi - 1), sum(d, qi)))
                    .map(|&d| name(d))
                    .collect(),
            }
        }
    }
}

fn dollars(cents: u64) -> f64 {
    cents as f64 / 100.0
}

fn person_json(t: &Total) -> Value {
    json!({"employee_id": t.employee_id, "name": t.name, "total_sales": dollars(t.cents)})
}

impl Answer {
    /// The answer file's JSON.
    pub fn to_json(&self) -> Value {
        match self {
            Answer::People(p) => Value::Array(p.iter().map(person_json).collect()),
            Answer::PerTeam(v) => Value::Object(
                v.iter()
                    .map(|(t, p)| (t.clone(), Value::Array(p.iter().map(person_json).collect())))
                    .collect(),
            ),
            Answer::Stats {
                team,
                employees,
                ids,
                cents,
            } => json!({
                "team": team,
                "employees": employees,
                "employee_ids": ids,
                "total_sales": dollars(*cents),
                "avg_sales_per_person": ((*cents as f64 / *employees.max(&1) as f64).round()) / 100.0,
            }),
            Answer::Averages(v) => Value::Object(
                v.iter()
                    .map(|(t, a)| (t.clone(), json!((a * 100.0).round() / 100.0)))
                    .collect(),
            ),
            Answer::Count { field, members } => {
                json!({"count": members.len(), *field: members})
            }
        }
    }
}

fn records(p: &[Total]) -> Vec<Record> {
    p.iter()
        .map(|t| Record {
            text: [("employee_id".to_owned(), t.employee_id.clone())].into(),
            numbers: [("total_sales".to_owned(), dollars(t.cents))].into(),
        })
        .collect()
}

/// Whether the drawn data gives this question a clean answer: no tied totals in a
/// quarter, at least four active people per team and quarter, and
/// quarter-over-quarter counts strictly between none and every candidate.
fn acceptable(q: &Question, sheets: &[Vec<Vec<Row>>]) -> bool {
    for qi in 0..4 {
        let mut seen = BTreeSet::new();
        for team in sheets {
            let t = totals(&team[qi]);
            if t.len() < 4 || !t.iter().all(|x| seen.insert(x.cents)) {
                return false;
            }
        }
    }
    match (q.kind, solve(q, sheets)) {
        (Kind::DeptPersonQoqCount, Answer::Count { members, .. }) => {
            let qi = usize::from(q.quarter) - 1;
            let before: BTreeSet<String> = totals(&sheets[q.teams[0]][qi - 1])
                .into_iter()
                .map(|x| x.employee_id)
                .collect();
            let both = totals(&sheets[q.teams[0]][qi])
                .iter()
                .filter(|x| before.contains(&x.employee_id))
                .count();
            !members.is_empty() && members.len() < both
        }
        (Kind::AllDeptsQoqCount, Answer::Count { members, .. }) => {
            !members.is_empty() && members.len() < q.teams.len()
        }
        _ => true,
    }
}

// ---------------------------------------------------------------------------
// Generation

fn out_name(q: &Question) -> String {
    let teams: Vec<&str> = q.teams.iter().map(|&d| TEAMS[d]).collect();
    let one = teams.first().copied().unwrap_or("");
    let many = teams.join("-");
    let (qq, mode, dir) = (
        q.quarter,
        match q.mode {
            Mode::Top => "top",
            Mode::Bottom => "bottom",
        },
        match q.direction {
            Direction::Up => "up",
            Direction::Down => "down",
        },
    );
    match q.kind {
        Kind::TopSalesEmployee => format!("team_{one}_Q{qq}_top_sales"),
        Kind::SalesStatistics => format!("team_{one}_Q{qq}_sales_stats"),
        Kind::CrossDeptsExtremeEmployee => format!("teams_{many}_Q{qq}_{mode}_employee"),
        Kind::PerDeptExtremeEmployee => format!("teams_{many}_Q{qq}_{mode}_per_team"),
        Kind::PerDeptAvgSales => format!("teams_{many}_Q{qq}_avg"),
        Kind::PerDeptTopN => format!("teams_{many}_Q{qq}_top{}_per_team", q.n),
        Kind::CrossDeptsTopN => format!("teams_{many}_Q{qq}_top{}", q.n),
        Kind::DeptPersonQoqCount => format!("team_{one}_Q{qq}_{dir}_person_count"),
        Kind::AllDeptsQoqCount => format!("all_Q{qq}_{dir}_team_count"),
    }
}

fn resolve(rng: &mut StreamRng, p: &Params) -> Result<Question, String> {
    let kind = p
        .kind
        .unwrap_or_else(|| KINDS[rng.random_range(0..KINDS.len())]);
    let misplaced = |what: &str, set: bool, applies: bool| -> Result<(), String> {
        if set && !applies {
            Err(format!(
                "sales: `{what}` does not apply to `{}`",
                kind.key()
            ))
        } else {
            Ok(())
        }
    };
    misplaced("department", p.department.is_some(), kind.one_team())?;
    misplaced("departments", p.departments.is_some(), kind.many_teams())?;
    misplaced("mode", p.mode.is_some(), kind.moded())?;
    misplaced("direction", p.direction.is_some(), kind.directed())?;
    misplaced("n", p.n.is_some(), kind.ranked())?;
    let teams = if kind.one_team() {
        vec![match &p.department {
            Some(d) => team_index(d)?,
            None => rng.random_range(0..TEAMS.len()),
        }]
    } else if kind.many_teams() {
        match &p.departments {
            Some(ds) => {
                let mut v = Vec::new();
                for d in ds {
                    let i = team_index(d)?;
                    if v.contains(&i) {
                        return Err(format!("sales: team `{d}` is listed twice"));
                    }
                    v.push(i);
                }
                if !(2..=3).contains(&v.len()) {
                    return Err(format!(
                        "sales: `departments` needs 2-3 distinct teams, found {}",
                        v.len()
                    ));
                }
                v
            }
            None => {
                let k = rng.random_range(2..=3usize);
                let mut v = pick_distinct(rng, TEAMS.len(), k);
                v.sort_unstable();
                v
            }
        }
    } else {
        (0..TEAMS.len()).collect()
    };
    let lowest = if kind.directed() { 2 } else { 1 };
    let quarter = p.quarter.unwrap_or_else(|| rng.random_range(lowest..=4u8));
    if !(lowest..=4).contains(&quarter) {
        return Err(format!(
            "sales: quarter {quarter} is out of range for `{}` ({lowest}-4)",
            kind.key()
        ));
    }
    let n = p.n.unwrap_or_else(|| rng.random_range(1..=3u8));
    if !(1..=3).contains(&n) {
        return Err(format!("sales: n {n} is out of range (1-3)"));
    }
    let mode = p.mode.unwrap_or_else(|| {
        if rng.random_bool(0.5) {
            Mode::Top
        } else {
            Mode::Bottom
        }
    });
    let direction = p.direction.unwrap_or_else(|| {
        if rng.random_bool(0.5) {
            Direction::Up
        } else {
            Direction::Down
        }
    });
    Ok(Question {
        kind,
        teams,
        quarter,
        mode,
        direction,
        n: usize::from(n),
    })
}

fn variant_key(q: &Question) -> String {
    let mut k = format!("sales/{}", q.kind.key());
    if q.kind.moded() {
        k.push_str(match q.mode {
            Mode::Top => "/top",
            Mode::Bottom => "/bottom",
        });
    }
    if q.kind.directed() {
        k.push_str(match q.direction {
            Direction::Up => "/up",
            Direction::Down => "/down",
        });
    }
    k
}

fn list(names: &[&str]) -> String {
    match names {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// What the objective asks, and an example of the answer's shape.
fn ask(q: &Question, year: i32) -> (String, String) {
    let teams: Vec<&str> = q.teams.iter().map(|&d| TEAMS[d]).collect();
    let (one, many, qq) = (teams[0], list(&teams), q.quarter);
    let mode = match q.mode {
        Mode::Top => "top",
        Mode::Bottom => "bottom",
    };
    let dir = match q.direction {
        Direction::Up => "up",
        Direction::Down => "down",
    };
    let person = r#"{"employee_id": "SR-0000", "name": "Full Name", "total_sales": 12345.67}"#;
    let per_team = |inner: &str| {
        let fields: Vec<String> = teams.iter().map(|t| format!("\"{t}\": {inner}")).collect();
        format!("{{{}}}", fields.join(", "))
    };
    match q.kind {
        Kind::TopSalesEmployee => (
            format!(
                "Find the top seller of the {one} team in Q{qq} {year} (list everyone tied for first)."
            ),
            format!("[{person}]"),
        ),
        Kind::SalesStatistics => (
            format!(
                "Work out the {one} team's Q{qq} {year} figures: how many representatives were active and which (their IDs), the team's total sales and its average sales per active representative."
            ),
            format!(
                r#"{{"team": "{one}", "employees": 0, "employee_ids": ["SR-0000"], "total_sales": 0.0, "avg_sales_per_person": 0.0}}"#
            ),
        ),
        Kind::CrossDeptsExtremeEmployee => (
            format!(
                "Find the {mode} seller of Q{qq} {year} across the {many} teams taken together (list everyone tied)."
            ),
            format!("[{person}]"),
        ),
        Kind::PerDeptExtremeEmployee => (
            format!(
                "For each of the {many} teams, find its {mode} seller of Q{qq} {year} (list everyone tied)."
            ),
            per_team(&format!("[{person}]")),
        ),
        Kind::PerDeptAvgSales => (
            format!(
                "For each of the {many} teams, work out its average Q{qq} {year} sales per active representative."
            ),
            per_team("0.0"),
        ),
        Kind::PerDeptTopN => (
            format!(
                "For each of the {many} teams, list its top {} sellers of Q{qq} {year}, highest first.",
                q.n
            ),
            per_team(&format!("[{person}, ...]")),
        ),
        Kind::CrossDeptsTopN => (
            format!(
                "List the top {} sellers of Q{qq} {year} across the {many} teams taken together, highest first.",
                q.n
            ),
            format!("[{person}, ...]"),
        ),
        Kind::DeptPersonQoqCount => (
            format!(
                "Count the {one} team's representatives whose sales went {dir} from Q{} to Q{qq} {year}, and list their IDs.",
                qq - 1
            ),
            r#"{"count": 0, "employee_ids": ["SR-0000"]}"#.to_owned(),
        ),
        Kind::AllDeptsQoqCount => (
            format!(
                "Count the sales teams whose total sales went {dir} from Q{} to Q{qq} {year}, and name them.",
                qq - 1
            ),
            // A placeholder, not a team: a real name here is a right answer often
            // enough (one team of three went up) for a script to copy it.
            r#"{"count": 0, "teams": ["Team name"]}"#.to_owned(),
        ),
    }
}

fn checkpoints(answer: &Answer, out: &str) -> Vec<CheckpointSpec> {
    let path = out.to_owned();
    let mut cps = vec![CheckpointSpec {
        key: "handbook_consulted".into(),
        description: "Read the Sales team's analysis handbook".into(),
        weight: 1,
        check: Check::Consulted(HANDBOOK.into()),
        feedback: "The sales analysis handbook was not read. Ask someone in Sales where the handbook for analysing sales figures is, and follow its rules.".into(),
    }];
    let people_fb = "The people or their totals are wrong. Per the handbook, drop cancelled orders, total each representative's booked orders in the right quarter's export, identify people by employee_id, and report only the teams asked about.";
    match answer {
        // No separate format checkpoint: a well-formed empty list earned a third of
        // the task without reading anything. The shape is part of `correct`.
        Answer::People(p) => {
            cps.push(CheckpointSpec {
                key: "correct".into(),
                description: "Exactly the right people, with their quarter totals".into(),
                weight: 2,
                check: Check::JsonRecords {
                    path,
                    pointer: String::new(),
                    expected: records(p),
                    tolerance: TOLERANCE,
                },
                feedback: people_fb.into(),
            });
        }
        Answer::PerTeam(v) => {
            cps.push(CheckpointSpec {
                key: "correct".into(),
                description: "Each team has exactly the right people, with their quarter totals"
                    .into(),
                weight: 2,
                check: Check::All(
                    v.iter()
                        .map(|(t, p)| Check::JsonRecords {
                            path: path.clone(),
                            pointer: format!("/{t}"),
                            expected: records(p),
                            tolerance: TOLERANCE,
                        })
                        .collect(),
                ),
                feedback: people_fb.into(),
            });
        }
        Answer::Stats {
            employees,
            ids,
            cents,
            ..
        } => {
            let avg = *cents as f64 / 100.0 / (*employees).max(1) as f64;
            // A team has four to seven active people, so the count alone is a small
            // number any document's list numbering states; it is judged together
            // with the IDs it counts.
            cps.push(CheckpointSpec {
                key: "headcount".into(),
                description: "The number of active representatives and their IDs are right".into(),
                weight: 1,
                check: Check::All(vec![
                    Check::JsonNumber {
                        path: path.clone(),
                        pointer: "/employees".into(),
                        expected: *employees as f64,
                        tolerance: 0.0,
                    },
                    Check::JsonStringSet {
                        path: path.clone(),
                        pointer: "/employee_ids".into(),
                        expected: ids.clone(),
                    },
                ]),
                feedback: "`employees` or `employee_ids` is wrong or missing. Count and list the representatives with at least one booked order in the quarter, not rows, and not people whose orders were all cancelled.".into(),
            });
            cps.push(CheckpointSpec {
                key: "totals".into(),
                description: "Total sales and average per active representative are right".into(),
                weight: 2,
                check: Check::All(vec![
                    Check::JsonNumber {
                        path: path.clone(),
                        pointer: "/total_sales".into(),
                        expected: dollars(*cents),
                        tolerance: TOLERANCE,
                    },
                    Check::JsonNumber {
                        path,
                        pointer: "/avg_sales_per_person".into(),
                        expected: avg,
                        tolerance: TOLERANCE,
                    },
                ]),
                feedback: "`total_sales` or `avg_sales_per_person` is wrong or missing. Leave out cancelled orders, and divide the team's total by its active representatives, as the handbook says.".into(),
            });
        }
        Answer::Averages(v) => {
            for (t, a) in v {
                cps.push(CheckpointSpec {
                    key: format!("avg_{}", slug(t)),
                    description: format!("The {t} team's average per active representative is right"),
                    weight: 1,
                    check: Check::JsonNumber {
                        path: path.clone(),
                        pointer: format!("/{t}"),
                        expected: *a,
                        tolerance: TOLERANCE,
                    },
                    feedback: format!("The average for the {t} team is wrong or missing. Leave out cancelled orders and divide the team's total by the number of active representatives (not by rows)."),
                });
            }
        }
        Answer::Count { field, members } => {
            let (what, fb) = if *field == "teams" {
                (
                    "teams",
                    "Compare each team's total booked sales in the two quarters (cancelled orders left out).",
                )
            } else {
                (
                    "representatives",
                    "Compare each person's booked totals in the two quarters; only people active in both quarters count.",
                )
            };
            // The count alone takes one of a few small values (1 or 2 of three teams),
            // so a guess would pay; it is judged together with the list it counts.
            cps.push(CheckpointSpec {
                key: (*field).into(),
                description: format!("The count and exactly the right {what} are listed"),
                weight: 2,
                check: Check::All(vec![
                    Check::JsonNumber {
                        path: path.clone(),
                        pointer: "/count".into(),
                        expected: members.len() as f64,
                        tolerance: 0.0,
                    },
                    Check::JsonStringSet {
                        path,
                        pointer: format!("/{field}"),
                        expected: members.clone(),
                    },
                ]),
                feedback: format!("`count` or the list `{field}` is wrong or missing. {fb}"),
            });
        }
    }
    cps
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("sales");
    let q = resolve(&mut rng, p)?;
    let year: i32 = ctx
        .date
        .split('-')
        .next()
        .and_then(|y| y.parse().ok())
        .ok_or("bad date")?;
    let year = year - 1;
    let taken: BTreeSet<String> = ctx.company.people.iter().map(|p| p.name.clone()).collect();
    let mut data_rng = ctx.rng("sales/data");
    let mut log_rng = ctx.rng("sales/cancellations");
    let mut drawn = None;
    for _ in 0..200 {
        let (reps, orders) = draw(&mut data_rng, year, &taken);
        let rendered: Vec<Vec<String>> = orders
            .iter()
            .enumerate()
            .map(|(team, qs)| {
                qs.iter()
                    .map(|os| {
                        let rows: Vec<(u32, String, Row)> = os
                            .iter()
                            .map(|o| {
                                let r = &reps[o.rep];
                                (
                                    o.id,
                                    format!("{year:04}-{:02}-{:02}", o.date.0, o.date.1),
                                    Row {
                                        employee_id: r.id.clone(),
                                        name: r.name.clone(),
                                        cents: o.cents,
                                        cancelled: false,
                                    },
                                )
                            })
                            .collect();
                        render_csv(&rows, TEAMS[team])
                    })
                    .collect()
            })
            .collect();
        // One log per quarter for every team, in the order the cancellations came in.
        let logs: Vec<String> = (0..4)
            .map(|qi| {
                let mut rows: Vec<(String, u32, &str)> = orders
                    .iter()
                    .flat_map(|team| team[qi].iter())
                    .filter(|o| o.cancelled)
                    .map(|o| {
                        let after = log_rng.random_range(1..=21u32);
                        let reason = REASONS[log_rng.random_range(0..REASONS.len())];
                        (date_after(year, o.date.0, o.date.1, after), o.id, reason)
                    })
                    .collect();
                rows.sort();
                let rows: Vec<(u32, String, &str)> =
                    rows.into_iter().map(|(d, id, r)| (id, d, r)).collect();
                render_cancellations(&rows)
            })
            .collect();
        // Solve from the text the agent will read, not from the draw.
        let cancelled: Vec<BTreeSet<u32>> = logs.iter().map(|t| parse_cancellations(t)).collect();
        let sheets: Vec<Vec<Vec<Row>>> = rendered
            .iter()
            .map(|qs| {
                qs.iter()
                    .zip(&cancelled)
                    .map(|(t, c)| parse_csv(t, c))
                    .collect()
            })
            .collect();
        if acceptable(&q, &sheets) {
            drawn = Some((rendered, logs, sheets));
            break;
        }
    }
    let (rendered, logs, sheets) =
        drawn.ok_or("sales: no acceptable data after 200 draws (a generator bug)")?;
    let answer = solve(&q, &sheets);

    let folder = format!("{}/{year}", ctx.folder("drive/sales"));
    let csv_path = |team: usize, quarter: usize| {
        format!("{folder}/sales_{}_Q{}_{year}.csv", TEAMS[team], quarter + 1)
    };
    let mut files = vec![FileSpec {
        path: HANDBOOK.into(),
        content: Content::Text(corpus::fill(HANDBOOK_TEXT, &[("company", corpus::COMPANY)])),
    }];
    for (team, qs) in rendered.into_iter().enumerate() {
        for (qi, text) in qs.into_iter().enumerate() {
            files.push(FileSpec {
                path: csv_path(team, qi),
                content: Content::Text(text),
            });
        }
    }
    let log_path = |quarter: usize| format!("{folder}/cancellations_Q{}_{year}.csv", quarter + 1);
    for (qi, text) in logs.into_iter().enumerate() {
        files.push(FileSpec {
            path: log_path(qi),
            content: Content::Text(text),
        });
    }
    let out = format!("workspace/{}{}.json", out_name(&q), ctx.suffix());

    let sales = ctx.company.department("Sales");
    if sales.is_empty() {
        return Err("the company has no Sales department".into());
    }
    let task = ctx.task_key();
    let clues: Vec<(String, Clue)> = sales
        .iter()
        .map(|person| {
            (
                person.key.clone(),
                Clue {
                    key: format!("clue/{}/{}", ctx.id, slug(&person.name)),
                    task: Some(task.clone()),
                    trigger: vec![
                        vec![
                            "sales".into(),
                            "salesperson".into(),
                            "salespeople".into(),
                            "revenue".into(),
                        ],
                        [
                            "handbook", "analysis", "figures", "export", "where", "method",
                            "compute", "calculate", "calculation", "total", "how", "official",
                            "count", "definition", "define", "methodology", "revenue", "number",
                            "data", "file", "report", "standard", "convention", "treat",
                        ]
                        .iter()
                        .map(|s| (*s).to_owned())
                        .collect(),
                    ],
                    after: Vec::new(),
                    response: format!(
                        "For sales figures, follow our analysis handbook: `{HANDBOOK}`. It explains how to read the quarterly exports (cancelled orders don't count, for one: they are in each quarter's cancellation log). The {year} exports are in `{folder}`."
                    ),
                },
            )
        })
        .collect();
    let contact = sales
        .iter()
        .find(|p| !p.position.ends_with("Manager"))
        .unwrap_or(&sales[0]);
    let mut read_reply = step("read_messages", json!({"with": contact.key}));
    read_reply.gate = Gate::ReplyFrom(contact.key.clone());
    let mut plan = vec![
        step(
            "send_message",
            json!({"to": contact.key, "text": format!("Hi {}, I'm analysing last year's Q{} sales figures. Where is the sales analysis handbook?", contact.name, q.quarter)}),
        ),
        read_reply,
        step("read_file", json!({"path": HANDBOOK})),
    ];
    let qi = usize::from(q.quarter) - 1;
    let quarters: Vec<usize> = if q.kind.directed() {
        vec![qi - 1, qi]
    } else {
        vec![qi]
    };
    for &qq in &quarters {
        plan.push(step("read_file", json!({"path": log_path(qq)})));
    }
    for &team in &q.teams {
        for &qq in &quarters {
            plan.push(step("read_file", json!({"path": csv_path(team, qq)})));
        }
    }
    plan.push(step(
        "write_file",
        json!({"path": out, "content": answer.to_json().to_string()}),
    ));
    let (request, example) = ask(&q, year);
    let spec = ctx
        .task_spec::<super::meta_task::Sales>(variant_key(&q))
        .key(task)
        .title(format!("Analyse Q{} {year} sales", q.quarter))
        .objective(format!(
            "Please analyse last year's sales for the quarterly review. {request} The quarterly order exports of every sales team are in `{folder}`. The Sales team has a handbook that says how sales figures are computed; ask them for it and follow it. Save the result as `{out}`, shaped like this: {example}"
        ))
        .checkpoints(checkpoints(&answer, &out))
        .hints(vec![
            "Someone in the Sales team can tell you where the sales analysis handbook is; its rules decide what counts.".into(),
            "Not every row is a sale, and not everyone works every quarter: read the handbook's rules before adding anything up.".into(),
            "Drop the orders listed in the quarter's cancellation log, total each employee_id's remaining orders in the requested quarter's export(s), and only then rank, average or compare.".into(),
        ])
        .plan(plan, 1)
        .build();
    Ok(Parts {
        tasks: vec![spec],
        files,
        meetings: Vec::new(),
        clues,
        ..Default::default()
    })
}

/// Trivially wrong answers for a generated sales task, as (workspace path,
/// content): every active person of the asked teams listed (list types), or the
/// figures computed over every row with cancelled orders included (statistics and
/// averages), or every candidate counted (quarter-over-quarter types).
pub fn wrong_answers(
    task: &TaskSpec,
    scenario: &tbsim_scenario::Scenario,
) -> Vec<(String, String)> {
    let arg = |s: &tbsim_scenario::PlanStep, k: &str| -> Option<String> {
        serde_json::from_str::<Value>(&s.args).ok()?[k]
            .as_str()
            .map(str::to_owned)
    };
    let Some(out) = task
        .plan
        .iter()
        .rfind(|s| s.tool == "write_file")
        .and_then(|s| arg(s, "path"))
    else {
        return Vec::new();
    };
    // The exports the oracle reads: (team, quarter) -> rows.
    let mut sheets: BTreeMap<(String, u8), Vec<Row>> = BTreeMap::new();
    for s in task.plan.iter().filter(|s| s.tool == "read_file") {
        let Some(path) = arg(s, "path").filter(|p| p.ends_with(".csv")) else {
            continue;
        };
        let Some(text) = scenario.files.iter().find_map(|f| match &f.content {
            Content::Text(t) if f.path == path => Some(t.clone()),
            _ => None,
        }) else {
            continue;
        };
        let stem = path.rsplit('/').next().unwrap_or("");
        let parts: Vec<&str> = stem.split('_').collect();
        // Every row counted: the cancellation logs are what these answers skip.
        if let ["sales", team, q, ..] = parts.as_slice()
            && let Some(q) = q.strip_prefix('Q').and_then(|q| q.parse::<u8>().ok())
        {
            sheets.insert(((*team).to_owned(), q), parse_csv(&text, &BTreeSet::new()));
        }
    }
    let last = sheets.keys().map(|k| k.1).max().unwrap_or(1);
    let teams: BTreeSet<String> = sheets.keys().map(|k| k.0.clone()).collect();
    let in_q = |t: &str, q: u8| sheets.get(&(t.to_owned(), q)).cloned().unwrap_or_default();
    let everyone = |t: &str| totals(&in_q(t, last));
    let naive = |t: &str| {
        let rows = in_q(t, last);
        let sum: u64 = rows.iter().map(|r| r.cents).sum();
        (rows.len(), sum)
    };
    let kind = task.variant.split('/').nth(1).unwrap_or("");
    let body = match kind {
        "top_sales_employee" | "cross_depts_extreme_employee" | "cross_depts_top_n" => {
            Value::Array(
                teams
                    .iter()
                    .flat_map(|t| everyone(t))
                    .map(|x| person_json(&x))
                    .collect(),
            )
        }
        "per_dept_extreme_employee" | "per_dept_top_n" => Value::Object(
            teams
                .iter()
                .map(|t| {
                    (
                        t.clone(),
                        Value::Array(everyone(t).iter().map(person_json).collect()),
                    )
                })
                .collect(),
        ),
        "sales_statistics" => {
            let t = teams.iter().next().cloned().unwrap_or_default();
            let (rows, sum) = naive(&t);
            json!({"team": t, "employees": rows, "total_sales": dollars(sum), "avg_sales_per_person": dollars(sum) / rows.max(1) as f64})
        }
        "per_dept_avg_sales" => Value::Object(
            teams
                .iter()
                .map(|t| {
                    let (rows, sum) = naive(t);
                    (t.clone(), json!(dollars(sum) / rows.max(1) as f64))
                })
                .collect(),
        ),
        "dept_person_qoq_count" => {
            let t = teams.iter().next().cloned().unwrap_or_default();
            let before: BTreeSet<String> = totals(&in_q(&t, last - 1))
                .into_iter()
                .map(|x| x.employee_id)
                .collect();
            let both: Vec<String> = everyone(&t)
                .into_iter()
                .map(|x| x.employee_id)
                .filter(|id| before.contains(id))
                .collect();
            json!({"count": both.len(), "employee_ids": both})
        }
        "all_depts_qoq_count" => json!({"count": teams.len(), "teams": teams}),
        _ => return Vec::new(),
    };
    vec![(out, body.to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, cents: u64, cancelled: bool) -> Row {
        Row {
            employee_id: id.into(),
            name: format!("Name {id}"),
            cents,
            cancelled,
        }
    }

    /// Team North: a 100+50 (+cancelled 999), b 120, c only cancelled, d 30.
    /// Team East: e 500, f 10. Quarter 1 and 2; in Q1 a had 200, b 100, d 40.
    fn sheets() -> Vec<Vec<Vec<Row>>> {
        let north_q2 = vec![
            row("a", 10_000, false),
            row("a", 5_000, false),
            row("a", 99_900, true),
            row("b", 12_000, false),
            row("c", 7_000, true),
            row("d", 3_000, false),
        ];
        let north_q1 = vec![
            row("a", 20_000, false),
            row("b", 10_000, false),
            row("d", 4_000, false),
            row("c", 1_000, false),
        ];
        let east_q2 = vec![row("e", 50_000, false), row("f", 1_000, false)];
        let east_q1 = vec![row("e", 40_000, false), row("f", 2_000, false)];
        vec![
            vec![north_q1, north_q2, Vec::new(), Vec::new()],
            vec![east_q1, east_q2, Vec::new(), Vec::new()],
            vec![Vec::new(); 4],
        ]
    }

    fn q(kind: Kind, teams: &[usize]) -> Question {
        Question {
            kind,
            teams: teams.to_vec(),
            quarter: 2,
            mode: Mode::Top,
            direction: Direction::Up,
            n: 2,
        }
    }

    fn ids(a: &Answer) -> Vec<String> {
        match a {
            Answer::People(p) => p.iter().map(|t| t.employee_id.clone()).collect(),
            _ => panic!("{a:?}"),
        }
    }

    #[test]
    fn totals_follow_the_handbook() {
        let t = totals(&sheets()[0][1]);
        let got: Vec<(&str, u64)> = t
            .iter()
            .map(|x| (x.employee_id.as_str(), x.cents))
            .collect();
        // Cancelled orders dropped; c (only cancelled) is not active.
        assert_eq!(got, [("a", 15_000), ("b", 12_000), ("d", 3_000)]);
    }

    #[test]
    fn each_type_solves_as_the_handbook_says() {
        let s = sheets();
        assert_eq!(ids(&solve(&q(Kind::TopSalesEmployee, &[0]), &s)), ["a"]);
        assert_eq!(
            solve(&q(Kind::SalesStatistics, &[0]), &s),
            Answer::Stats {
                team: "North".into(),
                employees: 3,
                ids: vec!["a".into(), "b".into(), "d".into()],
                cents: 30_000
            }
        );
        assert_eq!(
            ids(&solve(&q(Kind::CrossDeptsExtremeEmployee, &[0, 1]), &s)),
            ["e"]
        );
        let mut bottom = q(Kind::CrossDeptsExtremeEmployee, &[0, 1]);
        bottom.mode = Mode::Bottom;
        assert_eq!(ids(&solve(&bottom, &s)), ["f"]);
        assert_eq!(
            ids(&solve(&q(Kind::CrossDeptsTopN, &[0, 1]), &s)),
            ["e", "a"]
        );
        match solve(&q(Kind::PerDeptTopN, &[0, 1]), &s) {
            Answer::PerTeam(v) => {
                assert_eq!(v[0].0, "North");
                assert_eq!(v[0].1.len(), 2);
                assert_eq!(v[1].1[1].employee_id, "f");
            }
            a => panic!("{a:?}"),
        }
        match solve(&q(Kind::PerDeptAvgSales, &[0, 1]), &s) {
            Answer::Averages(v) => {
                assert!((v[0].1 - 100.0).abs() < 1e-9, "{v:?}");
                assert!((v[1].1 - 255.0).abs() < 1e-9, "{v:?}");
            }
            a => panic!("{a:?}"),
        }
        // a 200 -> 150 (down), b 100 -> 120 (up), d 40 -> 30 (down); c not active in Q2.
        let up = solve(&q(Kind::DeptPersonQoqCount, &[0]), &s);
        assert_eq!(
            up,
            Answer::Count {
                field: "employee_ids",
                members: vec!["b".into()]
            }
        );
        let mut down = q(Kind::DeptPersonQoqCount, &[0]);
        down.direction = Direction::Down;
        assert_eq!(
            solve(&down, &s),
            Answer::Count {
                field: "employee_ids",
                members: vec!["a".into(), "d".into()]
            }
        );
        // Team totals: North 350 -> 300 (down), East 420 -> 510 (up), West empty (no change).
        let teams = solve(&q(Kind::AllDeptsQoqCount, &[0, 1, 2]), &s);
        assert_eq!(
            teams,
            Answer::Count {
                field: "teams",
                members: vec!["East".into()]
            }
        );
    }

    #[test]
    fn ties_are_all_reported() {
        let rows = vec![
            row("x", 500, false),
            row("y", 500, false),
            row("z", 100, false),
        ];
        assert_eq!(extreme(&totals(&rows), Mode::Top).len(), 2);
        assert_eq!(extreme(&totals(&rows), Mode::Bottom).len(), 1);
    }

    #[test]
    fn csv_round_trips_joined_with_the_cancellation_log() {
        let rows = vec![
            (101, "2024-01-02".to_owned(), row("SR-1", 123_456, false)),
            (102, "2024-01-03".to_owned(), row("SR-2", 5, true)),
        ];
        let text = render_csv(&rows, "North");
        assert!(text.contains("101,2024-01-02,SR-1,Name SR-1,North,1234.56\n"));
        assert!(!text.contains("cancel"), "{text}");
        let log = render_cancellations(&[(102, "2024-01-09".into(), REASONS[0])]);
        assert_eq!(
            log,
            "order_id,cancelled_on,reason\n102,2024-01-09,customer withdrew\n"
        );
        let back: Vec<Row> = rows.into_iter().map(|r| r.2).collect();
        assert_eq!(parse_csv(&text, &parse_cancellations(&log)), back);
        // Without the log every order counts.
        assert!(
            parse_csv(&text, &BTreeSet::new())
                .iter()
                .all(|r| !r.cancelled)
        );
    }

    #[test]
    fn cancellation_dates_roll_over_months_and_years() {
        assert_eq!(date_after(2024, 1, 30, 3), "2024-02-02");
        assert_eq!(date_after(2024, 2, 28, 1), "2024-02-29");
        assert_eq!(date_after(2023, 12, 25, 10), "2024-01-04");
    }

    #[test]
    fn variants_follow_the_counting_rule() {
        let v = variants();
        assert_eq!(v.len(), 13);
        let keys: BTreeSet<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 13);
        assert!(keys.contains("sales/all_depts_qoq_count/down"));
        assert!(keys.contains("sales/cross_depts_extreme_employee/bottom"));
    }

    #[test]
    fn bad_parameters_are_clear_errors() {
        let mut rng = tbsim_core::rng::stream(1, "t");
        let err = |p: Params| resolve(&mut tbsim_core::rng::stream(1, "t"), &p).unwrap_err();
        assert!(
            err(Params {
                kind: Some(Kind::DeptPersonQoqCount),
                quarter: Some(1),
                ..Params::default()
            })
            .contains("2-4")
        );
        assert!(
            err(Params {
                kind: Some(Kind::TopSalesEmployee),
                mode: Some(Mode::Top),
                ..Params::default()
            })
            .contains("does not apply")
        );
        assert!(
            err(Params {
                kind: Some(Kind::PerDeptAvgSales),
                departments: Some(vec!["North".into()]),
                ..Params::default()
            })
            .contains("2-3")
        );
        assert!(
            err(Params {
                kind: Some(Kind::SalesStatistics),
                department: Some("South".into()),
                ..Params::default()
            })
            .contains("unknown team")
        );
        assert!(
            err(Params {
                kind: Some(Kind::CrossDeptsTopN),
                n: Some(4),
                ..Params::default()
            })
            .contains("1-3")
        );
        let ok = resolve(
            &mut rng,
            &Params {
                kind: Some(Kind::PerDeptTopN),
                departments: Some(vec!["sales_3".into(), "North".into()]),
                ..Params::default()
            },
        )
        .unwrap();
        assert_eq!(ok.teams, [2, 0]);
    }
}
