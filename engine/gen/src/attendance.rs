//! Attendance statistics: turn a month of badge punches into the figures a manager asked for.
//!
//! People Operations exports last month's punches (`attendance_<YYYY-MM>.csv`), the
//! staff roster and, where make-up requests are accepted, `approvals.json`. The rules
//! that turn punches into late arrivals, early departures, absences, overtime and
//! remote days live in a separate rules manual whose location only the managers of
//! the department in question know (People Operations, i.e. the HR managers, for
//! company-wide figures). The agent computes one of nine statistics for a department
//! or the whole company under one of five policy levels: L1 is lenient (10 minutes'
//! grace, a single missing punch is not an absence, no make-up), L2 shifts the hours
//! to 09:30-18:30, L3 is the base policy, L4 moves everyone to flexible 10:00-20:00
//! hours, and L5 gives three departments their own larger, more remote, flexible
//! regime. The ground truth comes from [`solve`], which reads exactly the published
//! data under exactly the published rules.
//!
//! Differences from the reference: the month is the calendar month before the
//! scenario's date (never the wall clock) and the resource checkpoint no longer looks
//! for a hard-coded month; the rules are asked of the managers *of the department
//! concerned* and the clue names the real manual path; the overtime minimum block the
//! manual states is applied, so departure jitter is never overtime; overtime never
//! runs past midnight; a workday with no punches at all is always an absence (the
//! reference counted it as present under L1); approved make-up punches live only in
//! `approvals.json` (the reference also merged them into the export) and rejected
//! requests exist; employee names are unique and distinct from the chat colleagues;
//! behaviour differs per person (some never late, some never absent), so no list
//! answer is "everyone" or "no one" and `has_late_or_early` is true or false with
//! equal odds and also asks for the employees concerned; `top_percent_employees` is
//! fully scored (the reference double-counted it and capped it at 65%), absence
//! varies by department and no figure can be copied from a document (averages
//! are never within their tolerance of a whole or half number, absence totals are
//! at least ten and never a number the rules or the handbook state), the
//! late/early key names follow the mode, list answers must list exactly the
//! expected employees (extra entries fail), and `attendance_rate` is declared a
//! percentage in the objective.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::date::{Clock, Date};
use tbsim_scenario::{
    Check, CheckpointSpec, Clue, Condition, Content, FileSpec, Gate, Record, Scenario, TaskSpec,
};

/// The nine statistics of the reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StatType {
    /// Average late days and early days per employee.
    AvgLateEarlyDays,
    /// Whether anyone was late or left early (and who).
    HasLateOrEarly,
    /// Total absence days.
    TotalAbsenceDays,
    /// Average overtime hours per employee.
    AverageOvertimeHours,
    /// Headcount, averages and the attendance rate.
    AttendanceStatistics,
    /// The most or least late or early employee(s), by `mode`.
    LateEarlyEmployee,
    /// The top `percent` of employees by late or early days (`metric`).
    TopPercentEmployees,
    /// The employee(s) with the most remote days.
    EmployeesWithMostRemoteDays,
    /// Employees with no late, early or absent day.
    EmployeesWithPerfectAttendance,
}

impl StatType {
    /// Every type, in the reference's order.
    pub const ALL: [StatType; 9] = [
        StatType::AvgLateEarlyDays,
        StatType::HasLateOrEarly,
        StatType::TotalAbsenceDays,
        StatType::AverageOvertimeHours,
        StatType::AttendanceStatistics,
        StatType::LateEarlyEmployee,
        StatType::TopPercentEmployees,
        StatType::EmployeesWithMostRemoteDays,
        StatType::EmployeesWithPerfectAttendance,
    ];

    /// The reference's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            StatType::AvgLateEarlyDays => "avg_late_early_days",
            StatType::HasLateOrEarly => "has_late_or_early",
            StatType::TotalAbsenceDays => "total_absence_days",
            StatType::AverageOvertimeHours => "average_overtime_hours",
            StatType::AttendanceStatistics => "attendance_statistics",
            StatType::LateEarlyEmployee => "late_early_employee",
            StatType::TopPercentEmployees => "top_percent_employees",
            StatType::EmployeesWithMostRemoteDays => "employees_with_most_remote_days",
            StatType::EmployeesWithPerfectAttendance => "employees_with_perfect_attendance",
        }
    }
}

/// Policy level (complexity of the rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Level {
    /// Lenient: 10 minutes' grace, a single missing punch is no absence, no make-up.
    L1,
    /// Hours 09:30-18:30, no make-up.
    L2,
    /// The base policy.
    L3,
    /// Flexible 10:00-20:00 hours for everyone.
    L4,
    /// Three departments have their own flexible regime.
    L5,
}

impl Level {
    const ALL: [Level; 5] = [Level::L1, Level::L2, Level::L3, Level::L4, Level::L5];
    fn number(self) -> u8 {
        match self {
            Level::L1 => 1,
            Level::L2 => 2,
            Level::L3 => 3,
            Level::L4 => 4,
            Level::L5 => 5,
        }
    }
}

/// Which extreme `late_early_employee` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Mode {
    /// Most late days.
    MostLate,
    /// Fewest late days.
    LeastLate,
    /// Most early departures.
    MostEarly,
    /// Fewest early departures.
    LeastEarly,
}

impl Mode {
    const ALL: [Mode; 4] = [
        Mode::MostLate,
        Mode::LeastLate,
        Mode::MostEarly,
        Mode::LeastEarly,
    ];
    fn name(self) -> &'static str {
        match self {
            Mode::MostLate => "most_late",
            Mode::LeastLate => "least_late",
            Mode::MostEarly => "most_early",
            Mode::LeastEarly => "least_early",
        }
    }
    fn metric(self) -> Metric {
        match self {
            Mode::MostLate | Mode::LeastLate => Metric::Late,
            Mode::MostEarly | Mode::LeastEarly => Metric::Early,
        }
    }
    fn most(self) -> bool {
        matches!(self, Mode::MostLate | Mode::MostEarly)
    }
}

/// Late arrivals or early departures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Metric {
    /// Late arrivals.
    Late,
    /// Early departures.
    Early,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Late => "late",
            Metric::Early => "early",
        }
    }
}

/// Parameters; unset ones are drawn uniformly from the reference's space.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The statistic.
    #[serde(default)]
    pub task_type: Option<StatType>,
    /// A department of the company, or `all`.
    #[serde(default)]
    pub department: Option<String>,
    /// Policy level.
    #[serde(default)]
    pub level: Option<Level>,
    /// For `LateEarlyEmployee` only.
    #[serde(default)]
    pub mode: Option<Mode>,
    /// For `TopPercentEmployees` only: 5, 10, 15 or 20.
    #[serde(default)]
    pub percent: Option<u8>,
    /// For `TopPercentEmployees` only.
    #[serde(default)]
    pub metric: Option<Metric>,
}

/// The variants: statistic type x policy level (reference §4.12).
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for t in StatType::ALL {
        for level in Level::ALL {
            v.push((
                format!("attendance/{}/l{}", t.name(), level.number()),
                Params {
                    task_type: Some(t),
                    level: Some(level),
                    ..Params::default()
                },
            ));
        }
    }
    v
}

/// First minute of the day at which punches count (06:00).
const DAY_OPENS: u32 = 6 * 60;
/// Last minute at which punches count (23:59).
const DAY_CLOSES: u32 = 23 * 60 + 59;
/// Latest simulated clock-out, so overtime never crosses midnight.
const LATEST_OUT: u32 = 23 * 60 + 30;
/// A department's headcount is drawn per instance from this range, so the number of
/// employees in scope is read from the roster, never known from the company's shape.
const HEADCOUNT: std::ops::RangeInclusive<usize> = 5..=22;
/// The department asked about draws from a wider range: its size is the answer of
/// `attendance_statistics`, and about forty values keep any one of them rare.
const SCOPE_HEADCOUNT: std::ops::RangeInclusive<usize> = 4..=44;

/// One department's rules. Times are minutes after midnight.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Scheduled start.
    pub start: u32,
    /// Scheduled end.
    pub end: u32,
    /// Minutes after the start before an arrival is late (without flex).
    pub grace_late: u32,
    /// Minutes before the end before a departure is early (without flex).
    pub grace_early: u32,
    /// Unpaid lunch break.
    pub lunch: u32,
    /// Flexible hours: (arrival window after the start, minimum minutes worked).
    pub flex: Option<(u32, u32)>,
    /// Overtime is counted from this time.
    pub ot_after: u32,
    /// Days with less overtime than this count none.
    pub ot_block: u32,
    /// A day with a clock-in but no clock-out (or the reverse) is an absence.
    pub strict: bool,
    /// Approved make-up requests replace missing punches.
    pub makeup: bool,
}

impl Policy {
    fn base() -> Policy {
        Policy {
            start: 9 * 60,
            end: 18 * 60,
            grace_late: 5,
            grace_early: 5,
            lunch: 60,
            flex: None,
            ot_after: 18 * 60 + 30,
            ot_block: 30,
            strict: true,
            makeup: true,
        }
    }
    fn flexible(mut self) -> Policy {
        self.start = 10 * 60;
        self.end = 20 * 60;
        self.flex = Some((30, 9 * 60));
        self.ot_after = 20 * 60 + 30;
        self
    }
    fn for_level(level: Level) -> Policy {
        let base = Policy::base();
        match level {
            Level::L1 => Policy {
                grace_late: 10,
                grace_early: 10,
                strict: false,
                makeup: false,
                ..base
            },
            Level::L2 => Policy {
                start: 9 * 60 + 30,
                end: 18 * 60 + 30,
                ot_after: 19 * 60,
                makeup: false,
                ..base
            },
            Level::L3 | Level::L5 => base,
            Level::L4 => base.flexible(),
        }
    }
    /// The latest on-time arrival.
    fn allowance(&self) -> u32 {
        self.flex.map_or(self.grace_late, |(w, _)| w)
    }
}

fn hm(minutes: u32) -> String {
    Clock(minutes).to_string()
}

/// Clock-in or clock-out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Io {
    /// Clock-in.
    In,
    /// Clock-out.
    Out,
}

impl Io {
    fn name(self) -> &'static str {
        match self {
            Io::In => "in",
            Io::Out => "out",
        }
    }
}

/// One punch as published (or an approved make-up punch).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Punch {
    /// Day of the month.
    pub day: u32,
    /// Minutes after midnight.
    pub minute: u32,
    /// Index of the employee in the roster.
    pub emp: usize,
    /// Direction.
    pub io: Io,
    /// Tagged `remote`.
    pub remote: bool,
}

/// A make-up request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Approval {
    /// Index of the employee in the roster.
    pub emp: usize,
    /// Day of the month.
    pub day: u32,
    /// Direction of the missing punch.
    pub io: Io,
    /// Minutes after midnight.
    pub minute: u32,
    /// Approved (else rejected).
    pub approved: bool,
}

/// A month of one employee's figures under the rules.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Workdays judged late.
    pub late_days: u32,
    /// Minutes late, summed over late days.
    pub late_minutes: u32,
    /// Workdays judged early departures.
    pub early_days: u32,
    /// Early minutes, summed over early days.
    pub early_minutes: u32,
    /// Workdays absent.
    pub absence_days: u32,
    /// Counted overtime minutes.
    pub overtime_minutes: u32,
    /// Present days with a remote punch.
    pub remote_days: u32,
    /// Workdays present.
    pub present_days: u32,
}

impl Stats {
    fn key(&self, m: Metric) -> (u32, u32) {
        match m {
            Metric::Late => (self.late_days, self.late_minutes),
            Metric::Early => (self.early_days, self.early_minutes),
        }
    }
    fn perfect(&self) -> bool {
        self.late_days == 0 && self.early_days == 0 && self.absence_days == 0
    }
}

/// Applies the rules to published data: one [`Stats`] per employee.
///
/// `policies[e]` is employee `e`'s department policy; `workdays` are the days of the
/// month that are Monday to Friday. Approvals count only when approved and when the
/// employee's policy accepts make-up requests.
pub fn solve(
    policies: &[&Policy],
    workdays: &[u32],
    punches: &[Punch],
    approvals: &[Approval],
) -> Vec<Stats> {
    let mut out = vec![Stats::default(); policies.len()];
    // (employee, day) -> (minute, direction, remote) for every punch that may count.
    type ByDay = std::collections::BTreeMap<(usize, u32), Vec<(u32, Io, bool)>>;
    let mut by_day = ByDay::new();
    for p in punches {
        by_day
            .entry((p.emp, p.day))
            .or_default()
            .push((p.minute, p.io, p.remote));
    }
    for a in approvals {
        if a.approved && policies[a.emp].makeup {
            by_day
                .entry((a.emp, a.day))
                .or_default()
                .push((a.minute, a.io, false));
        }
    }
    for (emp, policy) in policies.iter().enumerate() {
        let s = &mut out[emp];
        for &day in workdays {
            let punches: Vec<&(u32, Io, bool)> = by_day
                .get(&(emp, day))
                .map(|v| {
                    v.iter()
                        .filter(|(m, _, _)| (DAY_OPENS..=DAY_CLOSES).contains(m))
                        .collect()
                })
                .unwrap_or_default();
            if punches.is_empty() {
                s.absence_days += 1;
                continue;
            }
            let first_in = punches.iter().filter(|p| p.1 == Io::In).map(|p| p.0).min();
            let last_out = punches.iter().filter(|p| p.1 == Io::Out).map(|p| p.0).max();
            if policy.strict && (first_in.is_none() || last_out.is_none()) {
                s.absence_days += 1;
                continue;
            }
            s.present_days += 1;
            if punches.iter().any(|p| p.2) {
                s.remote_days += 1;
            }
            if let Some(i) = first_in
                && i > policy.start + policy.allowance()
            {
                s.late_days += 1;
                s.late_minutes += i - policy.start;
            }
            if let Some(o) = last_out {
                match policy.flex {
                    Some((_, min_work)) => {
                        if let Some(i) = first_in {
                            let worked = o.saturating_sub(i + policy.lunch);
                            if worked < min_work {
                                s.early_days += 1;
                                s.early_minutes += min_work - worked;
                            }
                        }
                    }
                    None => {
                        if o + policy.grace_early < policy.end {
                            s.early_days += 1;
                            s.early_minutes += policy.end - o;
                        }
                    }
                }
                if o >= policy.ot_after + policy.ot_block {
                    s.overtime_minutes += o - policy.ot_after;
                }
            }
        }
    }
    out
}

/// Day of the week, 0 = Sunday.
fn weekday(y: i32, m: u32, d: u32) -> u32 {
    Date::new(y, m, d).map_or(0, Date::weekday_from_sunday)
}

fn days_in_month(y: i32, m: u32) -> u32 {
    Date::new(y, m, 1).map_or(31, Date::days_in_month)
}

/// The calendar month before `date` (`YYYY-MM-DD`).
fn previous_month(date: &str) -> Result<(i32, u32), String> {
    let d = Date::parse(date).ok_or("bad date")?;
    let (y, m) = (d.year(), d.month());
    Ok(if m == 1 { (y - 1, 12) } else { (y, m - 1) })
}

/// A bell-shaped draw (Irwin-Hall: the sum of four uniforms, scaled to unit
/// variance), rounded and clamped. Only additions and multiplications, so the
/// same on every platform.
fn normal(rng: &mut StreamRng, mean: f64, sd: f64, lo: i64, hi: i64) -> i64 {
    let sum: f64 = (0..4).map(|_| rng.random_range(0.0..1.0)).sum();
    let z = (sum - 2.0) * 3f64.sqrt();
    ((mean + sd * z).round() as i64).clamp(lo, hi)
}

/// One roster entry.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Employee {
    id: String,
    name: String,
    dept: usize,
    employment: &'static str,
}

/// How one person behaves this month.
#[derive(Debug, Clone)]
struct Habits {
    punctual: bool,
    p_late: f64,
    p_early: f64,
    p_absent: f64,
    p_forget: f64,
    p_overtime: f64,
    p_remote: f64,
}

struct World {
    punches: Vec<Punch>,
    approvals: Vec<Approval>,
}

/// Simulates a month of punches. Employees in `clean` are punctual whatever
/// their department's habits.
fn simulate(
    rng: &mut StreamRng,
    roster: &[Employee],
    policies: &[&Policy],
    remote_ratio: &[f64],
    (y, m): (i32, u32),
    clean: &BTreeSet<usize>,
) -> World {
    let mut punches = Vec::new();
    let mut approvals = Vec::new();
    // Per department, the share of punctual people varies.
    let punctual_share: Vec<f64> = (0..remote_ratio.len())
        .map(|_| rng.random_range(0.25..0.5))
        .collect();
    // Absence varies by department too (a month with a cold going round, a quiet
    // one), so totals and averages spread instead of clustering on one small figure
    // a script could name without reading the punches.
    // On top, the whole month's climate over a tenfold range (the square of a
    // uniform: no `powf`, whose last bit may differ between platforms), so a total's
    // magnitude says nothing about the answer without counting.
    let climate = {
        let c: f64 = rng.random_range(0.55..1.75);
        c * c
    };
    let absence_level: Vec<f64> = (0..remote_ratio.len())
        .map(|_| rng.random_range(0.5..2.0) * climate)
        .collect();
    let habits: Vec<Habits> = roster
        .iter()
        .enumerate()
        .map(|(e, emp)| Habits {
            punctual: clean.contains(&e) || rng.random_bool(punctual_share[emp.dept]),
            p_late: rng.random_range(0.08..0.35),
            p_early: rng.random_range(0.04..0.2),
            p_absent: if rng.random_bool(0.5) {
                0.0
            } else {
                rng.random_range(0.02..0.1) * absence_level[emp.dept]
            },
            p_forget: if rng.random_bool(0.6) {
                0.0
            } else {
                rng.random_range(0.02..0.07)
            },
            p_overtime: rng.random_range(0.1..0.45),
            p_remote: remote_ratio[emp.dept],
        })
        .collect();
    for (e, h) in habits.iter().enumerate() {
        let pol = policies[e];
        for day in 1..=days_in_month(y, m) {
            let wd = weekday(y, m, day);
            if wd == 0 || wd == 6 {
                // Weekend visits are exported but never count.
                if rng.random_bool(0.02) {
                    let a = rng.random_range(9 * 60..12 * 60);
                    let b = a + rng.random_range(60..240);
                    for (minute, io) in [(a, Io::In), (b, Io::Out)] {
                        punches.push(Punch {
                            day,
                            minute,
                            emp: e,
                            io,
                            remote: false,
                        });
                    }
                }
                continue;
            }
            if rng.random_bool(h.p_absent) {
                continue;
            }
            let allowance = pol.allowance() as i64;
            let start = i64::from(pol.start);
            let arrive = (if !h.punctual && rng.random_bool(h.p_late) {
                start + normal(rng, 14.0, 12.0, 1, 120)
            } else if rng.random_bool(0.08) {
                // Near misses: right at the edge of what is still on time.
                start + rng.random_range((allowance - 2).max(0)..=allowance)
            } else {
                start + rng.random_range(-15..=allowance.min(3))
            }) as u32;
            let due = match pol.flex {
                Some((_, min_work)) => arrive + pol.lunch + min_work,
                None => pol.end,
            };
            let leave = if !h.punctual && rng.random_bool(h.p_early) {
                due - normal(rng, 18.0, 14.0, 1, 120) as u32
            } else if rng.random_bool(h.p_overtime) {
                (due.max(pol.ot_after) + normal(rng, 60.0, 30.0, 30, 240) as u32).min(LATEST_OUT)
            } else if pol.flex.is_some() {
                due + rng.random_range(0..=12)
            } else if rng.random_bool(0.08) {
                pol.end - pol.grace_early + rng.random_range(0..=2)
            } else {
                pol.end - pol.grace_early.min(5) + rng.random_range(0..=14)
            };
            let remote = rng.random_bool(h.p_remote);
            let mut day_punches = vec![(arrive, Io::In), (leave, Io::Out)];
            let forgot = (rng.random_bool(h.p_forget)).then(|| {
                if rng.random_bool(0.5) {
                    Io::In
                } else {
                    Io::Out
                }
            });
            if let Some(io) = forgot {
                let minute = if io == Io::In { arrive } else { leave };
                day_punches.retain(|p| p.1 != io);
                if pol.makeup && rng.random_bool(0.85) {
                    approvals.push(Approval {
                        emp: e,
                        day,
                        io,
                        minute,
                        approved: rng.random_bool(0.85),
                    });
                }
            } else if !remote && rng.random_bool(0.12) {
                // Lunch out and back: first-in / last-out makes these irrelevant.
                let out = rng.random_range(12 * 60..13 * 60 + 15);
                day_punches.push((out, Io::Out));
                day_punches.push((out + rng.random_range(35..75), Io::In));
            }
            if !remote && forgot != Some(Io::In) && rng.random_bool(0.05) {
                day_punches.push((arrive + rng.random_range(1..=3), Io::In));
            }
            if !remote && rng.random_bool(0.01) {
                day_punches.push((rng.random_range(5 * 60..5 * 60 + 55), Io::In));
            }
            for (minute, io) in day_punches {
                punches.push(Punch {
                    day,
                    minute,
                    emp: e,
                    io,
                    remote,
                });
            }
        }
    }
    punches.sort();
    World { punches, approvals }
}

/// What the answer must be.
#[derive(Debug, Clone, PartialEq)]
enum Expected {
    /// Named numbers: (key, value, tolerance, decimals for the oracle).
    Numbers(Vec<(&'static str, f64, f64, usize)>),
    /// `has_late_or_early`, who, and the days present in scope: the figure that
    /// shows the month was checked, so that "no one" is never a blind answer.
    Flag {
        any: bool,
        ids: Vec<String>,
        present: u32,
    },
    /// Employee records: text fields beyond id and name, numeric fields.
    List {
        text: Vec<&'static str>,
        numbers: Vec<String>,
        rows: Vec<(usize, Vec<String>, Vec<u32>)>,
    },
}

struct Question {
    task_type: StatType,
    mode: Option<Mode>,
    percent: Option<u8>,
    metric: Option<Metric>,
}

/// The expected answer over the employees in `scope`, or `None` when the month
/// is degenerate for the question (everyone or no one would be listed, or the
/// figure is zero), in which case the month is simulated again.
fn expected(
    q: &Question,
    stats: &[Stats],
    scope: &[usize],
    workdays: usize,
    roster: &[Employee],
    dept_names: &[String],
) -> Option<Expected> {
    let n = scope.len() as f64;
    let sum = |f: &dyn Fn(&Stats) -> u32| -> f64 {
        scope.iter().map(|&e| f64::from(f(&stats[e]))).sum::<f64>()
    };
    let list = |winners: Vec<usize>,
                text: Vec<&'static str>,
                numbers: Vec<String>,
                values: &dyn Fn(&Stats) -> Vec<u32>|
     -> Option<Expected> {
        if winners.is_empty() || winners.len() >= scope.len() {
            return None;
        }
        let rows = winners
            .into_iter()
            .map(|e| {
                let t = text
                    .iter()
                    .map(|_| dept_names[roster[e].dept].clone())
                    .collect();
                (e, t, values(&stats[e]))
            })
            .collect();
        Some(Expected::List {
            text,
            numbers,
            rows,
        })
    };
    match q.task_type {
        StatType::AvgLateEarlyDays => {
            let late = sum(&|s| s.late_days) / n;
            let early = sum(&|s| s.early_days) / n;
            (late > 0.0 && early > 0.0).then(|| {
                Expected::Numbers(vec![
                    ("avg_late_days", late, 0.01, 2),
                    ("avg_early_days", early, 0.01, 2),
                ])
            })
        }
        StatType::HasLateOrEarly => {
            let ids: Vec<String> = scope
                .iter()
                .filter(|&&e| stats[e].late_days + stats[e].early_days > 0)
                .map(|&e| roster[e].id.clone())
                .collect();
            (ids.len() < scope.len()).then_some(Expected::Flag {
                any: !ids.is_empty(),
                ids,
                present: scope.iter().map(|&e| stats[e].present_days).sum(),
            })
        }
        StatType::TotalAbsenceDays => {
            let total = sum(&|s| s.absence_days);
            (total > 0.0).then(|| Expected::Numbers(vec![("total_absence_days", total, 0.0, 0)]))
        }
        StatType::AverageOvertimeHours => {
            let avg = sum(&|s| s.overtime_minutes) / 60.0 / n;
            (avg > 0.0).then(|| Expected::Numbers(vec![("average_overtime_hours", avg, 0.01, 2)]))
        }
        StatType::AttendanceStatistics => {
            let late = sum(&|s| s.late_days) / n;
            let early = sum(&|s| s.early_days) / n;
            let absent = sum(&|s| s.absence_days) / n;
            let rate = sum(&|s| s.present_days) / (n * workdays as f64) * 100.0;
            (late > 0.0 && early > 0.0 && absent > 0.0).then(|| {
                Expected::Numbers(vec![
                    ("employees", n, 0.0, 0),
                    ("avg_late_days", late, 0.01, 2),
                    ("avg_early_days", early, 0.01, 2),
                    ("avg_absence_days", absent, 0.01, 2),
                    ("attendance_rate", rate, 0.01, 2),
                ])
            })
        }
        StatType::LateEarlyEmployee => {
            let mode = q.mode?;
            let m = mode.metric();
            let keys = scope.iter().map(|&e| stats[e].key(m));
            let best = if mode.most() { keys.max() } else { keys.min() }?;
            let winners = scope
                .iter()
                .copied()
                .filter(|&e| stats[e].key(m) == best)
                .collect();
            list(
                winners,
                Vec::new(),
                vec![
                    format!("{}_days", m.name()),
                    format!("{}_minutes_total", m.name()),
                ],
                &|s| {
                    let (d, mins) = s.key(m);
                    vec![d, mins]
                },
            )
        }
        StatType::TopPercentEmployees => {
            let (p, m) = (q.percent?, q.metric?);
            let mut ranked: Vec<(u32, u32)> = scope
                .iter()
                .map(|&e| stats[e].key(m))
                .filter(|k| k.0 > 0)
                .collect();
            ranked.sort_by(|a, b| b.cmp(a));
            let want = (scope.len() * usize::from(p)).div_ceil(100).max(1);
            let threshold = *ranked.get(want.min(ranked.len()).checked_sub(1)?)?;
            let winners = scope
                .iter()
                .copied()
                .filter(|&e| stats[e].key(m).0 > 0 && stats[e].key(m) >= threshold)
                .collect();
            list(
                winners,
                Vec::new(),
                vec![
                    format!("{}_days", m.name()),
                    format!("{}_minutes_total", m.name()),
                ],
                &|s| {
                    let (d, mins) = s.key(m);
                    vec![d, mins]
                },
            )
        }
        StatType::EmployeesWithMostRemoteDays => {
            let best = scope.iter().map(|&e| stats[e].remote_days).max()?;
            if best == 0 {
                return None;
            }
            let winners = scope
                .iter()
                .copied()
                .filter(|&e| stats[e].remote_days == best)
                .collect();
            list(winners, Vec::new(), vec!["remote_days".into()], &|s| {
                vec![s.remote_days]
            })
        }
        StatType::EmployeesWithPerfectAttendance => {
            let winners = scope
                .iter()
                .copied()
                .filter(|&e| stats[e].perfect())
                .collect();
            list(winners, vec!["department"], Vec::new(), &|_| Vec::new())
        }
    }
}

/// Whole numbers a text states (every run of digits).
fn stated_numbers(text: &str) -> BTreeSet<u64> {
    text.split(|c: char| !c.is_ascii_digit())
        .filter_map(|run| run.parse().ok())
        .collect()
}

/// Whether a script could hit the figure without computing it: an average within its
/// tolerance of a whole or half number (the handbook and the rules state whole
/// numbers only, and the median of an even count of them is a half; a ten-person
/// department's averages fall on tenths, so one month in five would match), or an
/// absence total that is a single digit (list numbering, grace minutes) or a number
/// the rules manual or the handbook state. Such months are drawn again.
fn copyable(e: &Expected, stated: &BTreeSet<u64>) -> bool {
    let Expected::Numbers(figures) = e else {
        return false;
    };
    figures.iter().any(|&(key, value, tolerance, decimals)| {
        if decimals > 0 {
            let halves = value * 2.0;
            (halves - halves.round()).abs() <= 2.0 * tolerance + 1e-9
        } else {
            // `employees` is the scope's size, drawn per instance away from stated
            // numbers before any month is simulated.
            key == "total_absence_days"
                && (value < 10.0 || stated.contains(&(value.round() as u64)))
        }
    })
}

fn round_to(v: f64, decimals: usize) -> f64 {
    let f = 10f64.powi(decimals as i32);
    (v * f).round() / f
}

/// The answer the oracle writes.
fn answer_json(e: &Expected, roster: &[Employee]) -> serde_json::Value {
    match e {
        Expected::Numbers(fields) => {
            let mut o = serde_json::Map::new();
            for (k, v, _, d) in fields {
                let v = round_to(*v, *d);
                o.insert(
                    (*k).into(),
                    if *d == 0 { json!(v as i64) } else { json!(v) },
                );
            }
            serde_json::Value::Object(o)
        }
        Expected::Flag { any, ids, present } => {
            json!({"has_late_or_early": any, "employees": ids, "present_days": present})
        }
        Expected::List {
            text,
            numbers,
            rows,
        } => {
            let items: Vec<serde_json::Value> = rows
                .iter()
                .map(|(e, t, n)| {
                    let mut o = serde_json::Map::new();
                    o.insert("employee_id".into(), json!(roster[*e].id));
                    o.insert("name".into(), json!(roster[*e].name));
                    for (k, v) in text.iter().zip(t) {
                        o.insert((*k).into(), json!(v));
                    }
                    for (k, v) in numbers.iter().zip(n) {
                        o.insert(k.clone(), json!(v));
                    }
                    serde_json::Value::Object(o)
                })
                .collect();
            json!({ "employees": items })
        }
    }
}

fn checkpoints(e: &Expected, path: &str, roster: &[Employee]) -> Vec<CheckpointSpec> {
    match e {
        Expected::Numbers(fields) => fields
            .iter()
            .map(|(k, v, tol, _)| CheckpointSpec {
                key: format!("{k}_correct"),
                description: format!("`{k}` in `{path}` is right"),
                weight: 1,
                check: Check::JsonNumber {
                    path: path.into(),
                    pointer: format!("/{k}"),
                    expected: *v,
                    tolerance: *tol,
                },
                feedback: format!(
                    "`{k}` is missing or wrong. Judge every workday of every employee in scope under their own department's section of the rules (grace or flexible hours, the overtime block, missing punches, make-up requests) before aggregating; averages are per employee and rounded to two decimals."
                ),
            })
            .collect(),
        Expected::Flag { any, ids, present } => {
            let (yes, no) = if *any { ("true", "false") } else { ("false", "true") };
            // One checkpoint: the flag alone is a yes/no guess.
            vec![CheckpointSpec {
                key: "employees_correct".into(),
                description: format!("`has_late_or_early` in `{path}` is right and `employees` lists exactly those with a late or early day"),
                weight: 2,
                check: Check::All(vec![
                    Check::FileContains {
                        path: path.into(),
                        present: vec!["has_late_or_early".into(), yes.into()],
                        absent: vec![no.into()],
                    },
                    Check::JsonStringSet {
                        path: path.into(),
                        pointer: "/employees".into(),
                        expected: ids.clone(),
                    },
                    // In a clean month `false` and `[]` are a prior; the days
                    // present are not.
                    Check::JsonNumber {
                        path: path.into(),
                        pointer: "/present_days".into(),
                        expected: f64::from(*present),
                        tolerance: 0.0,
                    },
                ]),
                feedback: "`has_late_or_early`, the `employees` list or `present_days` is wrong. A day is late or early only beyond the grace period (or outside the flexible-hours rule) of the employee's department; check each workday against those limits, list the IDs of exactly the employees in scope with at least one late or early day, and no one else, and count the workdays each employee in scope was present (not absent under their department's rules), summed over them.".into(),
            }]
        }
        Expected::List {
            text,
            numbers,
            rows,
        } => {
            let ident: Vec<Record> = rows
                .iter()
                .map(|(e, _, _)| Record {
                    text: [
                        ("employee_id".to_string(), roster[*e].id.clone()),
                        ("name".to_string(), roster[*e].name.clone()),
                    ]
                    .into(),
                    numbers: Default::default(),
                })
                .collect();
            let detail: Vec<Record> = rows
                .iter()
                .map(|(e, t, n)| {
                    let mut r = Record::default();
                    r.text.insert("employee_id".into(), roster[*e].id.clone());
                    for (k, v) in text.iter().zip(t) {
                        r.text.insert((*k).into(), v.clone());
                    }
                    for (k, v) in numbers.iter().zip(n) {
                        r.numbers.insert(k.clone(), f64::from(*v));
                    }
                    r
                })
                .collect();
            let fields: Vec<String> = text
                .iter()
                .map(|t| (*t).to_owned())
                .chain(numbers.iter().cloned())
                .collect();
            vec![
                CheckpointSpec {
                    key: "employees_identified".into(),
                    description: format!("`{path}` lists exactly the right employees"),
                    weight: 1,
                    check: Check::JsonRecords {
                        path: path.into(),
                        pointer: "/employees".into(),
                        expected: ident,
                        tolerance: 0.0,
                    },
                    feedback: "The list of employees is wrong: it must hold exactly the qualifying employees in scope (everyone tied included, no one else), each with the `employee_id` and `name` from the staff roster.".into(),
                },
                CheckpointSpec {
                    key: "details_correct".into(),
                    description: format!("Each listed employee's {} is right", fields.join(", ")),
                    weight: 1,
                    check: Check::JsonRecords {
                        path: path.into(),
                        pointer: "/employees".into(),
                        expected: detail,
                        tolerance: 0.0,
                    },
                    feedback: format!(
                        "The figures per employee ({}) are missing or wrong. Count them per workday under the employee's own department rules, from the first clock-in and last clock-out between 06:00 and 23:59.",
                        fields.join(", ")
                    ),
                },
            ]
        }
    }
}

/// The company's departments (executives excluded), in roster order.
fn departments(ctx: &Ctx<'_>) -> Vec<String> {
    let mut seen = Vec::new();
    for p in ctx.company.non_executives() {
        if !seen.contains(&p.department) {
            seen.push(p.department.clone());
        }
    }
    seen
}

fn policy_section(dept: &str, p: &Policy) -> String {
    let mut s = format!("## {dept}\n\n");
    let _ = writeln!(
        s,
        "- Scheduled hours: {} to {}, with an unpaid lunch break of {} minutes.",
        hm(p.start),
        hm(p.end),
        p.lunch
    );
    match p.flex {
        None => {
            let _ = writeln!(
                s,
                "- Late arrival: a clock-in after {} ({} minutes' grace). Late minutes are counted from {}.",
                hm(p.start + p.grace_late),
                p.grace_late,
                hm(p.start)
            );
            let _ = writeln!(
                s,
                "- Early departure: a clock-out before {} ({} minutes' grace). Early minutes are counted back from {}.",
                hm(p.end - p.grace_early),
                p.grace_early,
                hm(p.end)
            );
        }
        Some((window, min_work)) => {
            let _ = writeln!(
                s,
                "- Flexible hours. Late arrival: a clock-in after {} (up to {window} minutes after the scheduled start is fine). Late minutes are counted from {}.",
                hm(p.start + window),
                hm(p.start)
            );
            let _ = writeln!(
                s,
                "- Early departure: the time from clock-in to clock-out, minus the lunch break, is under {} hours. The early minutes are the shortfall.",
                min_work / 60
            );
        }
    }
    let _ = writeln!(
        s,
        "- Overtime: the time from {} to the clock-out. A day with less than {} minutes of it counts no overtime at all.",
        hm(p.ot_after),
        p.ot_block
    );
    s.push_str("- Remote work is allowed.\n");
    if p.strict {
        s.push_str("- Missing punches: a working day without both a clock-in and a clock-out is an absence.\n");
    } else {
        s.push_str("- Missing punches: a working day with at least one punch counts as present. Without a clock-in the day cannot be late; without a clock-out it cannot be early or carry overtime.\n");
    }
    if p.makeup {
        s.push_str("- Make-up requests are accepted (see below).\n");
    } else {
        s.push_str("- Make-up requests are not accepted this month.\n");
    }
    s
}

fn question_text(q: &Question, who: &str, among: &str) -> (String, String) {
    let rule = "under the attendance rules";
    match q.task_type {
        StatType::AvgLateEarlyDays => (
            format!("the average number of late days and of early-departure days per employee for {who} {rule}"),
            "{\"avg_late_days\": <number>, \"avg_early_days\": <number>} (two decimals)".into(),
        ),
        StatType::HasLateOrEarly => (
            format!("whether anyone {among} had at least one late arrival or early departure {rule}, and who; also give the total number of days present of the employees in scope, summed over them, to show the month was checked"),
            "{\"has_late_or_early\": true or false, \"employees\": [\"<employee_id>\", ...], \"present_days\": <integer>}".into(),
        ),
        StatType::TotalAbsenceDays => (
            format!("the total number of absence days of {who} {rule}"),
            "{\"total_absence_days\": <integer>}".into(),
        ),
        StatType::AverageOvertimeHours => (
            format!("the average overtime per employee for {who}, in hours, {rule} (total counted overtime divided by the number of employees)"),
            "{\"average_overtime_hours\": <number>} (two decimals)".into(),
        ),
        StatType::AttendanceStatistics => (
            format!("attendance statistics for {who} {rule}: the number of employees, the average late days, early-departure days and absence days per employee, and the attendance rate as a percentage (present days divided by employees x working days, times 100)"),
            "{\"employees\": <integer>, \"avg_late_days\": <number>, \"avg_early_days\": <number>, \"avg_absence_days\": <number>, \"attendance_rate\": <percentage>} (two decimals)".into(),
        ),
        StatType::LateEarlyEmployee => {
            let mode = q.mode.unwrap_or(Mode::MostLate);
            let m = mode.metric().name();
            let what = match mode {
                Mode::MostLate => "the most late days",
                Mode::LeastLate => "the fewest late days",
                Mode::MostEarly => "the most early departures",
                Mode::LeastEarly => "the fewest early departures",
            };
            let tie = if mode.most() { "more" } else { "fewer" };
            (
                format!("the employee(s) {among} with {what} {rule}; break ties by {tie} {m} minutes and list everyone still tied"),
                format!("{{\"employees\": [{{\"employee_id\": ..., \"name\": ..., \"{m}_days\": <integer>, \"{m}_minutes_total\": <integer>}}]}}"),
            )
        }
        StatType::TopPercentEmployees => {
            let (p, m) = (q.percent.unwrap_or(10), q.metric.unwrap_or(Metric::Late).name());
            (
                format!("the top {p}% of {who} by {m} days {rule}: with N employees in scope, take the first ceil(N x {p} / 100) (at least one) ranked by {m} days, then {m} minutes, both descending, plus anyone tied with the last of them; only employees with at least one {m} day qualify"),
                format!("{{\"employees\": [{{\"employee_id\": ..., \"name\": ..., \"{m}_days\": <integer>, \"{m}_minutes_total\": <integer>}}]}}"),
            )
        }
        StatType::EmployeesWithMostRemoteDays => (
            format!("the employee(s) {among} with the most remote days {rule} (list everyone tied)"),
            "{\"employees\": [{\"employee_id\": ..., \"name\": ..., \"remote_days\": <integer>}]}".into(),
        ),
        StatType::EmployeesWithPerfectAttendance => (
            format!("every employee {among} with perfect attendance {rule}: no late arrival, no early departure and no absence"),
            "{\"employees\": [{\"employee_id\": ..., \"name\": ..., \"department\": ...}]}".into(),
        ),
    }
}

fn file_suffix(q: &Question) -> String {
    match q.task_type {
        StatType::LateEarlyEmployee => q.mode.map_or("", Mode::name).to_owned(),
        StatType::TopPercentEmployees => format!(
            "top{}_{}",
            q.percent.unwrap_or(0),
            q.metric.map_or("", Metric::name)
        ),
        t => t.name().to_owned(),
    }
}

/// The staff roster: `headcount[d]` people per department, with unique names that
/// no chat colleague (nor the intern) has, and distinct random IDs.
fn make_roster(ctx: &Ctx<'_>, headcount: &[usize]) -> Result<Vec<Employee>, String> {
    let mut rng = ctx.rng("attendance/roster");
    let taken: BTreeSet<&str> = ctx
        .company
        .people
        .iter()
        .map(|p| p.name.as_str())
        .chain([super::company::INTERN_NAME])
        .collect();
    let combos = corpus::GIVEN_NAMES.len() * corpus::FAMILY_NAMES.len();
    let mut names = pick_distinct(&mut rng, combos, combos.min(400))
        .into_iter()
        .map(|i| {
            format!(
                "{} {}",
                corpus::GIVEN_NAMES[i / corpus::FAMILY_NAMES.len()],
                corpus::FAMILY_NAMES[i % corpus::FAMILY_NAMES.len()]
            )
        })
        .filter(|n| !taken.contains(n.as_str()));
    let total: usize = headcount.iter().sum();
    let ids: Vec<u32> = pick_distinct(&mut rng, 9000, total)
        .into_iter()
        .map(|i| i as u32 + 1000)
        .collect();
    let mut roster = Vec::with_capacity(total);
    for (d, &n) in headcount.iter().enumerate() {
        for _ in 0..n {
            let u: f64 = rng.random_range(0.0..1.0);
            roster.push(Employee {
                id: format!("E{}", ids[roster.len()]),
                name: names.next().ok_or("ran out of employee names")?,
                dept: d,
                employment: if u < 0.75 {
                    "full_time"
                } else if u < 0.9 {
                    "intern"
                } else {
                    "contract"
                },
            });
        }
    }
    Ok(roster)
}

/// The punch export, in time order.
fn export_csv(punches: &[Punch], roster: &[Employee], month_key: &str) -> String {
    let mut csv = String::from("employee_id,timestamp,io,source,tags\n");
    let mut rows: Vec<(u32, u32, &str, &Punch)> = punches
        .iter()
        .map(|p| (p.day, p.minute, roster[p.emp].id.as_str(), p))
        .collect();
    rows.sort_by(|a, b| (a.0, a.1, a.2, a.3.io).cmp(&(b.0, b.1, b.2, b.3.io)));
    for (day, minute, id, p) in rows {
        let _ = writeln!(
            csv,
            "{id},{month_key}-{day:02} {},{},{},{}",
            hm(minute),
            p.io.name(),
            if p.remote { "app" } else { "badge" },
            if p.remote { "remote" } else { "" }
        );
    }
    csv
}

const ATTEMPTS: usize = 60;

/// Draws the unset parameters and checks the set ones: (question, department or
/// `all`, level).
fn draw(
    p: &Params,
    depts: &[String],
    rng: &mut StreamRng,
) -> Result<(Question, String, Level), String> {
    let task_type = p
        .task_type
        .unwrap_or_else(|| StatType::ALL[rng.random_range(0..StatType::ALL.len())]);
    let department = match &p.department {
        Some(d) => d.clone(),
        None => {
            let i = rng.random_range(0..=depts.len());
            depts.get(i).cloned().unwrap_or_else(|| "all".into())
        }
    };
    if department != "all" && !depts.contains(&department) {
        return Err(format!(
            "attendance department `{department}` is not one of: all, {}",
            depts.join(", ")
        ));
    }
    let level = p
        .level
        .unwrap_or_else(|| Level::ALL[rng.random_range(0..Level::ALL.len())]);
    let mode = match (task_type, p.mode) {
        (StatType::LateEarlyEmployee, m) => {
            Some(m.unwrap_or_else(|| Mode::ALL[rng.random_range(0..Mode::ALL.len())]))
        }
        (_, Some(_)) => return Err("attendance `mode` applies only to LateEarlyEmployee".into()),
        (_, None) => None,
    };
    let (percent, metric) = match (task_type, p.percent, p.metric) {
        (StatType::TopPercentEmployees, pc, mt) => {
            let pc = pc.unwrap_or_else(|| [5, 10, 15, 20][rng.random_range(0..4)]);
            if ![5, 10, 15, 20].contains(&pc) {
                return Err(format!(
                    "attendance `percent` must be 5, 10, 15 or 20, found {pc}"
                ));
            }
            let mt = mt.unwrap_or_else(|| {
                if rng.random_bool(0.5) {
                    Metric::Late
                } else {
                    Metric::Early
                }
            });
            (Some(pc), Some(mt))
        }
        (_, None, None) => (None, None),
        _ => {
            return Err(
                "attendance `percent` and `metric` apply only to TopPercentEmployees".into(),
            );
        }
    };
    let q = Question {
        task_type,
        mode,
        percent,
        metric,
    };
    Ok((q, department, level))
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("attendance");
    let depts = departments(ctx);
    if depts.is_empty() {
        return Err("the company has no departments".into());
    }
    let (q, department, level) = draw(p, &depts, &mut rng)?;
    let task_type = q.task_type;
    // has_late_or_early: "no" is the answer a content-blind agent can write without
    // reading anything (`false` with an empty list), so it is the minority (one in
    // five); "yes" needs the right people, which only the punches and rules give.
    let want_clean = task_type == StatType::HasLateOrEarly && rng.random_bool(0.2);

    // Policies by department; L5 gives three departments their own regime.
    let base = Policy::for_level(level);
    let overrides: Vec<usize> = if level == Level::L5 {
        pick_distinct(&mut rng, depts.len(), 3.min(depts.len()))
    } else {
        Vec::new()
    };
    let dept_policy: Vec<Policy> = (0..depts.len())
        .map(|d| {
            if overrides.contains(&d) {
                base.clone().flexible()
            } else {
                base.clone()
            }
        })
        .collect();
    let remote_ratio: Vec<f64> = (0..depts.len())
        .map(|d| if overrides.contains(&d) { 0.3 } else { 0.2 })
        .collect();

    let (y, m) = previous_month(ctx.date)?;
    let workdays: Vec<u32> = (1..=days_in_month(y, m))
        .filter(|&d| !matches!(weekday(y, m, d), 0 | 6))
        .collect();
    let month_key = format!("{y:04}-{m:02}");
    let month_name = format!("{} {y}", super::MONTHS[m as usize - 1]);
    let sections: Vec<String> = depts
        .iter()
        .zip(&dept_policy)
        .map(|(d, p)| policy_section(d, p))
        .collect();
    let manual_text = corpus::fill(
        RULES,
        &[
            ("company", corpus::COMPANY),
            ("month_name", &month_name),
            ("sections", sections.join("\n").trim_end()),
        ],
    );
    let stated: BTreeSet<u64> = stated_numbers(&manual_text)
        .union(&stated_numbers(corpus::INTERN_HANDBOOK))
        .copied()
        .collect();
    // Headcounts vary per department and instance; a scope whose size the rules or
    // the handbook happen to state is drawn again (a script could copy it).
    let scope_dept = depts.iter().position(|d| *d == department);
    let in_scope =
        |hc: &[usize]| -> usize { scope_dept.map_or_else(|| hc.iter().sum(), |d| hc[d]) };
    let mut headcount: Vec<usize> = Vec::new();
    for _ in 0..ATTEMPTS {
        headcount = (0..depts.len())
            .map(|d| {
                rng.random_range(if Some(d) == scope_dept {
                    SCOPE_HEADCOUNT
                } else {
                    HEADCOUNT
                })
            })
            .collect();
        if !stated.contains(&(in_scope(&headcount) as u64)) {
            break;
        }
    }
    if stated.contains(&(in_scope(&headcount) as u64)) {
        return Err("attendance: every headcount drawn is a number the rules state".into());
    }
    let roster = make_roster(ctx, &headcount)?;
    let policies: Vec<&Policy> = roster.iter().map(|e| &dept_policy[e.dept]).collect();
    let scope: Vec<usize> = (0..roster.len())
        .filter(|&e| department == "all" || depts[roster[e].dept] == department)
        .collect();
    let clean: BTreeSet<usize> = if want_clean {
        scope.iter().copied().collect()
    } else {
        BTreeSet::new()
    };

    let mut sim_rng = ctx.rng("attendance/punches");
    let mut found = None;
    for _ in 0..ATTEMPTS {
        let world = simulate(
            &mut sim_rng,
            &roster,
            &policies,
            &remote_ratio,
            (y, m),
            &clean,
        );
        // Make-up levels always have requests to apply, approved and rejected.
        if level >= Level::L3
            && (!world.approvals.iter().any(|a| a.approved)
                || !world.approvals.iter().any(|a| !a.approved))
        {
            continue;
        }
        let stats = solve(&policies, &workdays, &world.punches, &world.approvals);
        if let Some(e) = expected(&q, &stats, &scope, workdays.len(), &roster, &depts)
            && !copyable(&e, &stated)
            && (want_clean == matches!(e, Expected::Flag { any: false, .. })
                || task_type != StatType::HasLateOrEarly)
        {
            found = Some((world, e));
            break;
        }
    }
    let (world, exp) = found.ok_or("attendance: no usable month after many attempts")?;

    // Published files.
    let folder = ctx.folder("drive/hr/attendance");
    let csv_path = format!("{folder}/attendance_{month_key}.csv");
    let roster_path = format!("{folder}/staff_roster.json");
    let approvals_path = format!("{folder}/approvals.json");
    let manual = format!("{}/attendance_rules.md", ctx.folder("drive/hr/policies"));
    let roster_json: Vec<serde_json::Value> = roster
        .iter()
        .map(|e| json!({"employee_id": e.id, "name": e.name, "department": depts[e.dept], "employment": e.employment}))
        .collect();
    let mut files = vec![
        FileSpec {
            path: csv_path.clone(),
            content: Content::Text(export_csv(&world.punches, &roster, &month_key)),
        },
        FileSpec {
            path: roster_path.clone(),
            content: Content::Text(
                serde_json::to_string_pretty(&roster_json).map_err(|e| e.to_string())?,
            ),
        },
        FileSpec {
            path: manual.clone(),
            content: Content::Text(manual_text),
        },
    ];
    let has_approvals = !world.approvals.is_empty();
    if has_approvals {
        let mut list: Vec<(&Approval, &str)> = world
            .approvals
            .iter()
            .map(|a| (a, roster[a.emp].id.as_str()))
            .collect();
        list.sort_by_key(|(a, id)| (a.day, a.minute, *id));
        let mut seen = BTreeSet::new();
        let mut req = std::iter::from_fn(|| {
            loop {
                let id = rng.random_range(10_000..100_000u32);
                if seen.insert(id) {
                    return Some(id);
                }
            }
        });
        let items: Vec<serde_json::Value> = list
            .iter()
            .map(|(a, id)| {
                json!({
                    "request_id": format!("MK-{}", req.next().unwrap_or(0)),
                    "employee_id": id,
                    "date": format!("{month_key}-{:02}", a.day),
                    "io": a.io.name(),
                    "time": hm(a.minute),
                    "status": if a.approved { "approved" } else { "rejected" },
                })
            })
            .collect();
        files.push(FileSpec {
            path: approvals_path.clone(),
            content: Content::Text(
                serde_json::to_string_pretty(&items).map_err(|e| e.to_string())?,
            ),
        });
    }

    // Who knows where the rules are: the department's managers (People Operations
    // for company-wide figures).
    let (owner_dept, who, among) = if department == "all" {
        (
            "Human Resources".to_owned(),
            "all employees".to_owned(),
            "across the company".to_owned(),
        )
    } else {
        (
            department.clone(),
            format!("the {department} department"),
            format!("in the {department} department"),
        )
    };
    let managers = ctx.company.managers(&owner_dept);
    let Some(contact) = managers.first().copied() else {
        return Err(format!("{owner_dept} has no manager"));
    };
    let task = ctx.task_key();
    let clues: Vec<(String, Clue)> = managers
        .iter()
        .map(|p| {
            (p.key.clone(), Clue {
                key: format!("clue/{}/{}", ctx.id, slug(&p.name)),
                task: Some(task.clone()),
                trigger: vec![
                    // Attendance words only (not "late"), so questions about other
                    // tasks' manuals never trigger this clue.
                    ["attendance", "punctuality", "overtime", "absence", "punch", "badge", "late", "lateness", "tardiness", "tardy", "clock", "timekeeping", "early departure", "leave early", "working hours", "timesheet"]
                        .iter().map(|s| (*s).to_owned()).collect(),
                    ["rule", "manual", "where", "threshold", "limit", "criteria", "definition", "define", "count", "grace", "how"]
                        .iter().map(|s| (*s).to_owned()).collect(),
                ],
                after: vec![Condition::Released(task.clone())],
                response: format!(
                    "The attendance rules for {month_name} are in `{manual}`. They differ by department, so use the section for each person's own department.{}",
                    if has_approvals {
                        format!(" The make-up requests are in `{approvals_path}`.")
                    } else {
                        String::new()
                    }
                ),
            })
        })
        .collect();

    let scope_slug = if department == "all" {
        "all".to_owned()
    } else {
        slug(&department).replace('-', "_")
    };
    let answer_path = format!(
        "workspace/dept_{scope_slug}_{}{}.json",
        file_suffix(&q),
        ctx.suffix()
    );
    let (question, shape) = question_text(&q, &who, &among);
    let mut read_reply = step("read_messages", json!({"with": contact.key}));
    read_reply.gate = Gate::ReplyFrom(contact.key.clone());
    let mut plan = vec![
        step("list_folder", json!({"path": folder})),
        step(
            "send_message",
            json!({"to": contact.key, "text": format!("Hi {}, I'm preparing the {month_name} attendance figures for {who}. Which attendance rules apply, and where is the rules manual?", contact.name)}),
        ),
        read_reply,
        step("read_file", json!({"path": manual})),
        step("read_file", json!({"path": roster_path})),
        step("read_file", json!({"path": csv_path})),
    ];
    if has_approvals {
        plan.push(step("read_file", json!({"path": approvals_path})));
    }
    plan.push(step(
        "write_file",
        json!({"path": answer_path, "content": serde_json::to_string_pretty(&answer_json(&exp, &roster)).map_err(|e| e.to_string())?}),
    ));

    let mut cps = vec![CheckpointSpec {
        key: "rules_consulted".into(),
        description: "Read the attendance rules manual".into(),
        weight: 1,
        check: Check::Consulted(manual.clone()),
        feedback: format!(
            "The attendance rules were not read. They differ by level and department; {} knows where they are, so ask before computing anything.",
            if department == "all" {
                "People Operations (an HR manager)".to_owned()
            } else {
                format!("a {department} manager")
            }
        ),
    }];
    cps.extend(checkpoints(&exp, &answer_path, &roster));
    let variant = format!("attendance/{}/l{}", task_type.name(), level.number());
    let spec = ctx
        .task_spec::<super::meta_task::Attendance>(variant)
        .key(task)
        .title(format!("Attendance figures for {month_name}"))
        .objective(format!(
            "Please analyse last month's attendance ({month_name}) and report {question}. People Operations exported the punches and the staff roster to `{folder}/`. The attendance rules differ by level and department and are not in that folder: ask {} for them rather than guessing. Save the result as `{answer_path}` in the form {shape}.",
            if department == "all" { "People Operations (an HR manager)".to_owned() } else { format!("the {department} manager") }
        ))
        .checkpoints(cps)
        .hints(vec![
            format!("The rules are not with the data; {} can tell you where they are.", if department == "all" { "an HR manager".to_owned() } else { format!("the {department} manager") }),
            "Apply the section of each employee's own department: grace or flexible hours, the overtime block, what a missing punch means, and whether make-up requests count.".into(),
            "Per workday use only punches from 06:00 to 23:59, take the first clock-in and the last clock-out, add approved make-up punches where accepted (never rejected ones), and only then aggregate over the employees in scope.".into(),
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

const RULES: &str = include_str!("corpus/attendance/rules.md");

/// "Every candidate" answers: every employee in scope (or both truth values).
pub fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
    let Some(path) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::JsonNumber { path, .. }
        | Check::JsonRecords { path, .. }
        | Check::JsonStringSet { path, .. }
        | Check::FileContains { path, .. } => Some(path.clone()),
        Check::All(v) => v.iter().find_map(|c| match c {
            Check::FileContains { path, .. } => Some(path.clone()),
            _ => None,
        }),
        _ => None,
    }) else {
        return Vec::new();
    };
    let folder = task
        .plan
        .first()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s.args).ok())
        .and_then(|v| v["path"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let roster: Vec<serde_json::Value> = scenario
        .files
        .iter()
        .find(|f| f.path == format!("{folder}/staff_roster.json"))
        .and_then(|f| match &f.content {
            Content::Text(t) => serde_json::from_str(t).ok(),
            Content::Sidecar { .. } | Content::Drawing(_) => None,
        })
        .unwrap_or_default();
    let scope: Vec<&serde_json::Value> = roster
        .iter()
        .filter(|e| {
            let d = slug(e["department"].as_str().unwrap_or("")).replace('-', "_");
            path.contains("/dept_all_") || path.contains(&format!("/dept_{d}_"))
        })
        .collect();
    let ids: Vec<&str> = scope
        .iter()
        .filter_map(|e| e["employee_id"].as_str())
        .collect();
    let everyone: Vec<serde_json::Value> = scope
        .iter()
        .map(|e| {
            json!({"employee_id": e["employee_id"], "name": e["name"], "department": e["department"],
                "late_days": 0, "late_minutes_total": 0, "early_days": 0, "early_minutes_total": 0, "remote_days": 0})
        })
        .collect();
    let body = if task.variant.contains("/has_late_or_early/") {
        json!({"has_late_or_early": [true, false], "employees": ids})
    } else if task
        .checkpoints
        .iter()
        .any(|c| c.key == "employees_identified")
    {
        json!({ "employees": everyone })
    } else {
        // Numeric answers have no candidates; zeros stand in for "nothing found".
        let mut o = serde_json::Map::new();
        for c in &task.checkpoints {
            if let Some(k) = c.key.strip_suffix("_correct") {
                o.insert(k.to_owned(), json!(0));
            }
        }
        serde_json::Value::Object(o)
    };
    vec![(path, body.to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn punch(day: u32, minute: u32, io: Io) -> Punch {
        Punch {
            day,
            minute,
            emp: 0,
            io,
            remote: false,
        }
    }

    fn one(policy: &Policy, punches: &[Punch], approvals: &[Approval]) -> Stats {
        solve(&[policy], &[1], punches, approvals)[0]
    }

    #[test]
    fn weekdays_and_previous_months() {
        assert_eq!(weekday(2025, 10, 1), 3, "a Wednesday");
        assert_eq!(weekday(2024, 2, 29), 4, "a Thursday");
        assert_eq!(weekday(2026, 1, 4), 0, "a Sunday");
        assert_eq!(previous_month("2025-10-01").unwrap(), (2025, 9));
        assert_eq!(previous_month("2026-01-15").unwrap(), (2025, 12));
        assert!(previous_month("2026-13-01").is_err());
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(2100, 2), 28);
    }

    #[test]
    fn grace_periods_are_exclusive_limits() {
        let p = Policy::base();
        let at = |i: u32, o: u32| one(&p, &[punch(1, i, Io::In), punch(1, o, Io::Out)], &[]);
        let on_edge = at(9 * 60 + 5, 17 * 60 + 55);
        assert_eq!((on_edge.late_days, on_edge.early_days), (0, 0));
        let past = at(9 * 60 + 6, 17 * 60 + 54);
        assert_eq!(
            (
                past.late_days,
                past.late_minutes,
                past.early_days,
                past.early_minutes
            ),
            (1, 6, 1, 6),
            "minutes count from the scheduled times, not the grace limits"
        );
        assert_eq!(past.present_days, 1);
    }

    #[test]
    fn first_in_last_out_inside_the_day_window() {
        let p = Policy::base();
        let s = one(
            &p,
            &[
                punch(1, 5 * 60 + 30, Io::In), // night patrol: ignored
                punch(1, 9 * 60 + 20, Io::In),
                punch(1, 9 * 60 + 22, Io::In),
                punch(1, 12 * 60 + 30, Io::Out),
                punch(1, 13 * 60 + 20, Io::In),
                punch(1, 18 * 60 + 2, Io::Out),
            ],
            &[],
        );
        assert_eq!((s.late_days, s.late_minutes, s.early_days), (1, 20, 0));
    }

    #[test]
    fn overtime_needs_the_minimum_block() {
        let p = Policy::base();
        let out = |o: u32| one(&p, &[punch(1, 9 * 60, Io::In), punch(1, o, Io::Out)], &[]);
        assert_eq!(out(18 * 60 + 59).overtime_minutes, 0, "29 minutes");
        assert_eq!(out(19 * 60).overtime_minutes, 30);
        assert_eq!(out(21 * 60 + 10).overtime_minutes, 160);
    }

    #[test]
    fn flexible_hours_judge_lateness_by_window_and_earliness_by_time_worked() {
        let p = Policy::base().flexible();
        let day = |i: u32, o: u32| one(&p, &[punch(1, i, Io::In), punch(1, o, Io::Out)], &[]);
        // 10:30 is inside the window; 10 hours minus lunch is exactly 9 worked.
        let ok = day(10 * 60 + 30, 20 * 60 + 30);
        assert_eq!(
            (ok.late_days, ok.early_days, ok.overtime_minutes),
            (0, 0, 0)
        );
        let late = day(10 * 60 + 31, 20 * 60 + 31);
        assert_eq!((late.late_days, late.late_minutes), (1, 31));
        // Leaving at 19:00 after a 9:50 start is fine by the clock but short by 10.
        let short = day(9 * 60 + 50, 19 * 60 + 40);
        assert_eq!((short.early_days, short.early_minutes), (1, 10));
    }

    #[test]
    fn missing_punches_depend_on_strictness_and_make_up() {
        let strict = Policy::base();
        let lenient = Policy::for_level(Level::L1);
        let only_in = [punch(1, 9 * 60 + 30, Io::In)];
        assert_eq!(one(&strict, &only_in, &[]).absence_days, 1);
        let s = one(&lenient, &only_in, &[]);
        assert_eq!(
            (s.absence_days, s.present_days, s.late_days, s.early_days),
            (0, 1, 1, 0),
            "present, late by the clock-in, never early without a clock-out"
        );
        assert_eq!(one(&lenient, &[], &[]).absence_days, 1, "no punches at all");
        let approval = |approved| Approval {
            emp: 0,
            day: 1,
            io: Io::Out,
            minute: 17 * 60,
            approved,
        };
        let s = one(&strict, &only_in, &[approval(true)]);
        assert_eq!((s.absence_days, s.early_days, s.early_minutes), (0, 1, 60));
        assert_eq!(one(&strict, &only_in, &[approval(false)]).absence_days, 1);
        let no_makeup = Policy::for_level(Level::L2);
        assert_eq!(one(&no_makeup, &only_in, &[approval(true)]).absence_days, 1);
    }

    #[test]
    fn remote_days_count_only_when_present() {
        let p = Policy::base();
        let remote = |minute, io| Punch {
            day: 1,
            minute,
            emp: 0,
            io,
            remote: true,
        };
        let s = one(&p, &[remote(9 * 60, Io::In), remote(18 * 60, Io::Out)], &[]);
        assert_eq!((s.remote_days, s.present_days), (1, 1));
        let s = one(&p, &[remote(9 * 60, Io::In)], &[]);
        assert_eq!((s.remote_days, s.absence_days), (0, 1));
    }

    fn stats(keys: &[(u32, u32)]) -> Vec<Stats> {
        keys.iter()
            .map(|&(d, m)| Stats {
                late_days: d,
                late_minutes: m,
                ..Stats::default()
            })
            .collect()
    }

    fn roster(n: usize) -> Vec<Employee> {
        (0..n)
            .map(|i| Employee {
                id: format!("E{}", 1000 + i),
                name: format!("P{i}"),
                dept: 0,
                employment: "full_time",
            })
            .collect()
    }

    fn winners(e: Option<Expected>) -> Option<Vec<usize>> {
        match e? {
            Expected::List { rows, .. } => Some(rows.into_iter().map(|r| r.0).collect()),
            _ => None,
        }
    }

    #[test]
    fn top_percent_includes_ties_and_never_zero_counts() {
        let q = |p| Question {
            task_type: StatType::TopPercentEmployees,
            mode: None,
            percent: Some(p),
            metric: Some(Metric::Late),
        };
        let s = stats(&[
            (3, 40),
            (5, 10),
            (3, 40),
            (0, 0),
            (1, 5),
            (0, 0),
            (2, 9),
            (0, 0),
            (0, 0),
            (2, 1),
        ]);
        let scope: Vec<usize> = (0..10).collect();
        let r = roster(10);
        let d = vec!["Sales".to_string()];
        let w = |p| {
            let mut v = winners(expected(&q(p), &s, &scope, 20, &r, &d)).unwrap();
            v.sort();
            v
        };
        assert_eq!(w(5), vec![1], "ceil(10 x 5%) = 1");
        assert_eq!(w(10), vec![1]);
        // Second place is tied, so both (3, 40) are in: three for a top two.
        assert_eq!(w(15), vec![0, 1, 2]);
        assert_eq!(w(20), vec![0, 1, 2]);
        // Only one person has a late day: asking for more never adds zeros.
        let mut few = stats(&[(0, 0); 10]);
        few[4] = stats(&[(1, 1)])[0];
        let got = winners(expected(&q(20), &few, &scope, 20, &r, &d));
        assert_eq!(got, Some(vec![4]), "a top two of one");
    }

    #[test]
    fn degenerate_lists_are_rejected() {
        let q = Question {
            task_type: StatType::LateEarlyEmployee,
            mode: Some(Mode::LeastLate),
            percent: None,
            metric: None,
        };
        let r = roster(3);
        let d = vec!["Sales".to_string()];
        let all_tied = stats(&[(0, 0), (0, 0), (0, 0)]);
        assert!(expected(&q, &all_tied, &[0, 1, 2], 20, &r, &d).is_none());
        let some = stats(&[(0, 0), (2, 5), (0, 0)]);
        assert_eq!(
            winners(expected(&q, &some, &[0, 1, 2], 20, &r, &d)),
            Some(vec![0, 2])
        );
    }

    /// The number of employees in scope was one constant (a department of ten) in
    /// about 85% of `attendance_statistics` instances, which the gate's probe learnt.
    /// It is now drawn per instance: no count is common and none is a number the
    /// rules or the handbook state.
    #[test]
    fn the_count_in_scope_is_drawn_and_never_stated() {
        use crate::company::{Roster, rooms};
        use tbsim_scenario::{Priority, Release};
        let rooms = rooms();
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        let seeds = 0..120u64;
        for seed in seeds.clone() {
            let roster = Roster::generate(seed, "s", 40).unwrap();
            let ctx = Ctx {
                scenario: "s",
                id: "att",
                company: &roster,
                date: "2025-10-01",
                start: "09:00",
                deadline: "17:00",
                release: Release::Start,
                priority: Priority::Normal,
                rooms: &rooms,
                seed,
                day: 1,
            };
            let p = Params {
                task_type: Some(StatType::AttendanceStatistics),
                level: Some(Level::L2),
                ..Params::default()
            };
            let parts = generate(&ctx, &p).unwrap();
            let mut stated = stated_numbers(corpus::INTERN_HANDBOOK);
            for f in &parts.files {
                if let (true, Content::Text(t)) =
                    (f.path.ends_with("attendance_rules.md"), &f.content)
                {
                    stated.extend(stated_numbers(t));
                }
            }
            let n = parts.tasks[0]
                .checkpoints
                .iter()
                .find_map(|c| match &c.check {
                    Check::JsonNumber {
                        pointer, expected, ..
                    } if pointer == "/employees" => Some(*expected as u64),
                    _ => None,
                })
                .expect("an employees checkpoint");
            assert!(!stated.contains(&n), "seed {seed}: {n} is stated");
            *counts.entry(n).or_default() += 1;
        }
        let top = counts.values().max().copied().unwrap_or(0);
        assert!(
            counts.len() >= 25 && top * 100 <= 8 * seeds.count(),
            "{} distinct counts, the commonest in {top} of 120: {counts:?}",
            counts.len()
        );
    }

    #[test]
    fn variants_count_types_times_levels() {
        let v = variants();
        assert_eq!(v.len(), 45);
        let keys: BTreeSet<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 45);
        assert!(keys.contains("attendance/top_percent_employees/l5"));
    }
}
