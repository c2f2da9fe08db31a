//! Importing the reference implementation's benchmark config (`tbsim gen --from-evoenv`).
//!
//! The format (reference §3.2) is `{version, datetime, scenarios: [{name, days: [{name,
//! tasks: [{name, arguments, deadline}]}]}]}`. Each task name maps to one family and
//! its `arguments` map onto that family's parameters exactly: an unknown task name,
//! an unknown argument or a value outside the family's space is an error naming its
//! JSON path. Generation then draws everything else from `--seed`, so unlike the
//! reference the imported benchmark is reproducible.
//!
//! Reference spellings are accepted (`"very easy"`, `XiAn`, `"Master's"`, `c++`,
//! `"5 years"`, one-element lists). Where this project's world differs, the mapping
//! keeps the meaning: the reference's three sales departments `Sales_1`..`Sales_3`
//! are the sales teams North, East and West for sales analysis, and the one `Sales`
//! department for attendance and event planning; an event plan given by the names
//! of the reference's fixed places means "the itinerary is given" (an A level), the
//! itinerary itself being drawn from the instance's own map; the event level, which
//! the reference does not store, follows from the metrics and the deadline.

use serde_json::{Map, Value};

use super::{
    DayPlan, Family, ReleasePlan, ScenarioPlan, Suite, TaskPlan, ads_strategy, attendance,
    data_completion, event_planning, kb_fix, meeting_attend, meeting_book, resume_select, sales,
    transaction_review, website_monitor,
};
use tbsim_scenario::Priority;

/// Reads an argument object, refusing keys outside `allowed`.
pub(crate) fn object<'a>(
    v: &'a Value,
    at: &str,
    allowed: &[&str],
) -> Result<&'a Map<String, Value>, String> {
    let m = v
        .as_object()
        .ok_or_else(|| format!("{at}: expected an object"))?;
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "{at}.{k}: unknown argument; expected one of: {}",
            allowed.join(", ")
        ));
    }
    Ok(m)
}

pub(crate) fn string<'a>(
    m: &'a Map<String, Value>,
    at: &str,
    k: &str,
) -> Result<Option<&'a str>, String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("{at}.{k}: expected a string")),
    }
}

pub(crate) fn integer(m: &Map<String, Value>, at: &str, k: &str) -> Result<Option<i64>, String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .map(Some)
            .ok_or_else(|| format!("{at}.{k}: expected an integer")),
    }
}

pub(super) fn kb(args: &Value, at: &str) -> Result<Family, String> {
    let m = object(args, at, &["task_params"])?;
    let tp = match m.get("task_params") {
        Some(v) => object(
            v,
            &format!("{at}.task_params"),
            &[
                "difficulty",
                "num_articles",
                "links_per_article_min",
                "links_per_article_max",
                "owners_per_article",
            ],
        )?,
        None => return Ok(Family::KbFix(kb_fix::Params::default())),
    };
    let at = format!("{at}.task_params");
    let difficulty = match string(tp, &at, "difficulty")? {
        None => None,
        Some("easy") => Some(kb_fix::Level::Easy),
        Some("medium") => Some(kb_fix::Level::Medium),
        Some("hard") => Some(kb_fix::Level::Hard),
        Some(o) => {
            return Err(format!(
                "{at}.difficulty: `{o}` is not easy, medium or hard"
            ));
        }
    };
    let n = |k: &str| integer(tp, &at, k).map(|v| v.map(|v| v.max(0) as usize));
    let links = match (n("links_per_article_min")?, n("links_per_article_max")?) {
        (Some(a), Some(b)) => Some((a, b)),
        (None, None) => None,
        _ => {
            return Err(format!(
                "{at}: give both links_per_article_min and links_per_article_max"
            ));
        }
    };
    Ok(Family::KbFix(kb_fix::Params {
        difficulty,
        articles: n("num_articles")?,
        links,
        owners_per_article: n("owners_per_article")?,
    }))
}

pub(super) fn meeting(args: &Value, at: &str) -> Result<Family, String> {
    let m = object(
        args,
        at,
        &[
            "meeting_start_time",
            "meeting_last_time",
            "task_type",
            "task_level",
        ],
    )?;
    let start = string(m, at, "meeting_start_time")?
        .map(|s| {
            s.split_once('T')
                .map(|(_, t)| t.get(..5).unwrap_or(t).to_owned())
                .ok_or_else(|| format!("{at}.meeting_start_time: expected YYYY-MM-DDTHH:MM:SS"))
        })
        .transpose()?;
    let duration_min = match m.get("meeting_last_time") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let h = v
                .as_f64()
                .ok_or_else(|| format!("{at}.meeting_last_time: expected hours as a number"))?;
            Some((h * 60.0).round() as u32)
        }
    };
    let kind = match string(m, at, "task_type")? {
        None => None,
        Some("none") => Some(meeting_attend::Kind::None),
        Some("write") => Some(meeting_attend::Kind::Write),
        Some("sum") => Some(meeting_attend::Kind::Sum),
        Some("check") => Some(meeting_attend::Kind::Check),
        Some("check_sum") => Some(meeting_attend::Kind::CheckSum),
        Some(o) => {
            return Err(format!(
                "{at}.task_type: `{o}` is not none, write, sum, check or check_sum"
            ));
        }
    };
    let level = integer(m, at, "task_level")?
        .map(|l| u8::try_from(l).map_err(|_| format!("{at}.task_level: out of range")))
        .transpose()?;
    Ok(Family::MeetingAttend(meeting_attend::Params {
        start,
        duration_min,
        kind,
        level,
    }))
}

pub(super) fn transactions(args: &Value, at: &str) -> Result<Family, String> {
    let m = object(
        args,
        at,
        &["num_normal_transactions", "num_abnormal_transactions"],
    )?;
    let u8v = |k: &str| {
        integer(m, at, k)?
            .map(|v| u8::try_from(v).map_err(|_| format!("{at}.{k}: out of range")))
            .transpose()
    };
    Ok(Family::TransactionReview(transaction_review::Params {
        normal: u8v("num_normal_transactions")?,
        abnormal: u8v("num_abnormal_transactions")?,
    }))
}

/// A name compared loosely: trimmed, lower-case, spaces and hyphens as `_` (so the
/// reference's `"very easy"` matches `very_easy`).
fn norm(s: &str) -> String {
    s.trim().to_lowercase().replace([' ', '-'], "_")
}

fn names<T>(table: &[(&str, T)]) -> String {
    table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// Reads a string argument that must name one of `table`'s entries.
fn choice<T: Copy>(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    table: &[(&str, T)],
) -> Result<Option<T>, String> {
    match string(m, at, k)? {
        None => Ok(None),
        Some(s) => table
            .iter()
            .find(|(n, _)| norm(n) == norm(s))
            .map(|(_, v)| Some(*v))
            .ok_or_else(|| format!("{at}.{k}: `{s}` is not one of: {}", names(table))),
    }
}

/// Reads an integer argument that must lie in `lo..=hi`.
fn int_in(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    lo: i64,
    hi: i64,
) -> Result<Option<i64>, String> {
    match integer(m, at, k)? {
        Some(v) if !(lo..=hi).contains(&v) => Err(format!(
            "{at}.{k}: {v} is out of range; expected {lo} to {hi}"
        )),
        v => Ok(v),
    }
}

/// Reads an integer argument that must be one of `allowed`.
fn int_of(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    allowed: &[i64],
) -> Result<Option<i64>, String> {
    match integer(m, at, k)? {
        Some(v) if !allowed.contains(&v) => Err(format!(
            "{at}.{k}: {v} is out of range; expected one of {}",
            allowed
                .iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        )),
        v => Ok(v),
    }
}

fn number(m: &Map<String, Value>, at: &str, k: &str) -> Result<Option<f64>, String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_f64()
            .map(Some)
            .ok_or_else(|| format!("{at}.{k}: expected a number")),
    }
}

/// Whether an argument is present (a JSON `null` counts as absent).
fn given(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_some_and(|v| !v.is_null())
}

/// A list of strings, each element checked by `f` at its own path.
fn list<T>(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    f: impl Fn(&str, &str) -> Result<T, String>,
) -> Result<Option<Vec<T>>, String> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let at = format!("{at}.{k}[{i}]");
                v.as_str()
                    .ok_or_else(|| format!("{at}: expected a string"))
                    .and_then(|s| f(s, &at))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(_) => Err(format!("{at}.{k}: expected a list of strings")),
    }
}

/// Refuses a repeated element of a list read by [`list`].
fn distinct<T: PartialEq>(items: &[T], at: &str) -> Result<(), String> {
    match (1..items.len()).find(|&i| items[..i].contains(&items[i])) {
        Some(i) => Err(format!("{at}[{i}]: listed twice; expected distinct values")),
        None => Ok(()),
    }
}

/// `HH:MM` of a reference timestamp (`YYYY-MM-DDTHH:MM:SS`; the date is the
/// scenario's own).
fn clock(s: &str, at: &str) -> Result<String, String> {
    s.split_once('T')
        .and_then(|(_, t)| t.get(..5))
        .filter(|t| hhmm(t))
        .map(str::to_owned)
        .ok_or_else(|| format!("{at}: `{s}` is not YYYY-MM-DDTHH:MM:SS"))
}

fn hhmm(t: &str) -> bool {
    t.len() == 5 && t.as_bytes()[2] == b':' && tbsim_scenario::date::Clock::parse(t).is_some()
}

/// The company's departments. The reference had three sales departments,
/// `Sales_1`..`Sales_3`; this company has one, `Sales`, which they all map to.
const DEPARTMENTS: [&str; 6] = [
    "Engineering",
    "Sales",
    "Marketing",
    "Product",
    "Human Resources",
    "Finance",
];

fn department(
    m: &Map<String, Value>,
    at: &str,
    k: &str,
    all: bool,
) -> Result<Option<String>, String> {
    let Some(s) = string(m, at, k)? else {
        return Ok(None);
    };
    let n = norm(s);
    if all && n == "all" {
        return Ok(Some("all".into()));
    }
    if matches!(n.as_str(), "sales_1" | "sales_2" | "sales_3") {
        return Ok(Some("Sales".into()));
    }
    DEPARTMENTS
        .iter()
        .find(|d| norm(d) == n)
        .map(|d| Some((*d).to_owned()))
        .ok_or_else(|| {
            format!(
                "{at}.{k}: `{s}` is not a department; expected {}{}, Sales_1, Sales_2 or Sales_3",
                if all { "all, " } else { "" },
                DEPARTMENTS.join(", ")
            )
        })
}

pub(super) fn ads(args: &Value, at: &str) -> Result<Family, String> {
    use ads_strategy::{ChannelMix, Group, Level};
    let m = object(args, at, &["task_params"])?;
    let Some(v) = m.get("task_params").filter(|v| !v.is_null()) else {
        return Ok(Family::AdsStrategy(ads_strategy::Params::default()));
    };
    let at = format!("{at}.task_params");
    let tp = object(
        v,
        &at,
        &[
            "city",
            "difficulty",
            "budget",
            "num_channels",
            "channel_mix",
            "heatmap_size",
            "heatmap_centers",
            "heatmap_min_center_distance",
            "heatmap_sigma_min",
            "heatmap_sigma_max",
            "target_group",
        ],
    )?;
    let difficulty = string(tp, &at, "difficulty")?
        .map(|s| {
            Level::parse(s).ok_or_else(|| {
                format!("{at}.difficulty: `{s}` is not very easy, easy, medium, hard or very hard")
            })
        })
        .transpose()?;
    // Cities compare by their letters only, so `XiAn` is `Xi'an`.
    let letters = |c: &str| {
        c.chars()
            .filter(char::is_ascii_alphanumeric)
            .collect::<String>()
            .to_lowercase()
    };
    let city = string(tp, &at, "city")?
        .map(|s| {
            ads_strategy::cities()
                .into_iter()
                .find(|c| letters(c) == letters(s))
                .map(str::to_owned)
                .ok_or_else(|| {
                    format!(
                        "{at}.city: `{s}` is not one of: {}",
                        ads_strategy::cities().join(", ")
                    )
                })
        })
        .transpose()?;
    let heatmap_size = int_in(tp, &at, "heatmap_size", 4, 30)?.map(|v| v as u32);
    let heatmap_min_center_distance = match number(tp, &at, "heatmap_min_center_distance")? {
        Some(d) if !(0.0..=f64::from(heatmap_size.unwrap_or(30))).contains(&d) => {
            return Err(format!(
                "{at}.heatmap_min_center_distance: {d} is out of range; expected 0 to the grid size ({})",
                heatmap_size.unwrap_or(30)
            ));
        }
        d => d,
    };
    let heatmap_sigma = match (
        number(tp, &at, "heatmap_sigma_min")?,
        number(tp, &at, "heatmap_sigma_max")?,
    ) {
        (None, None) => None,
        (Some(a), Some(b)) if 0.5 <= a && a <= b && b <= 30.0 => Some((a, b)),
        (Some(a), Some(b)) => {
            return Err(format!(
                "{at}.heatmap_sigma_min: {a}, heatmap_sigma_max: {b} are out of range; expected 0.5 <= min <= max <= 30"
            ));
        }
        _ => {
            return Err(format!(
                "{at}: give both heatmap_sigma_min and heatmap_sigma_max"
            ));
        }
    };
    Ok(Family::AdsStrategy(ads_strategy::Params {
        difficulty,
        city,
        budget: int_in(tp, &at, "budget", 1_000, 100_000)?.map(|v| v as u32),
        num_channels: int_in(tp, &at, "num_channels", 4, 60)?.map(|v| v as usize),
        channel_mix: choice(
            tp,
            &at,
            "channel_mix",
            &[
                ("balanced", ChannelMix::Balanced),
                ("transit_heavy", ChannelMix::TransitHeavy),
                ("retail_heavy", ChannelMix::RetailHeavy),
                ("campus_heavy", ChannelMix::CampusHeavy),
            ],
        )?,
        heatmap_size,
        heatmap_centers: int_in(tp, &at, "heatmap_centers", 1, 4)?.map(|v| v as u32),
        heatmap_min_center_distance,
        heatmap_sigma,
        cost_range: None,
        effect_range: None,
        budget_tolerance: None,
        target_group: choice(
            tp,
            &at,
            "target_group",
            &[
                (Group::CollegeStudents.key(), Group::CollegeStudents),
                (Group::YoungProfessionals.key(), Group::YoungProfessionals),
                (Group::Seniors.key(), Group::Seniors),
            ],
        )?,
    }))
}

pub(super) fn attendance(args: &Value, at: &str) -> Result<Family, String> {
    use attendance::{Level, Metric, Mode, StatType};
    let m = object(args, at, &["task_type_name", "task_params", "difficulty"])?;
    let types: Vec<(&str, StatType)> = StatType::ALL.iter().map(|t| (t.name(), *t)).collect();
    let task_type = choice(m, at, "task_type_name", &types)?;
    let level = match m.get("difficulty").filter(|v| !v.is_null()) {
        None => None,
        Some(v) => {
            let at = format!("{at}.difficulty");
            let d = object(v, &at, &["level"])?;
            choice(
                d,
                &at,
                "level",
                &[
                    ("L1", Level::L1),
                    ("L2", Level::L2),
                    ("L3", Level::L3),
                    ("L4", Level::L4),
                    ("L5", Level::L5),
                ],
            )?
        }
    };
    let mut p = attendance::Params {
        task_type,
        level,
        ..Default::default()
    };
    if let Some(v) = m.get("task_params").filter(|v| !v.is_null()) {
        let at = format!("{at}.task_params");
        let tp = object(v, &at, &["department", "mode", "percent", "metric"])?;
        for (k, ty) in [
            ("mode", StatType::LateEarlyEmployee),
            ("percent", StatType::TopPercentEmployees),
            ("metric", StatType::TopPercentEmployees),
        ] {
            if given(tp, k) && task_type != Some(ty) {
                return Err(format!(
                    "{at}.{k}: applies only to task_type_name `{}`",
                    ty.name()
                ));
            }
        }
        p.department = department(tp, &at, "department", true)?;
        p.mode = choice(
            tp,
            &at,
            "mode",
            &[
                ("most_late", Mode::MostLate),
                ("least_late", Mode::LeastLate),
                ("most_early", Mode::MostEarly),
                ("least_early", Mode::LeastEarly),
            ],
        )?;
        p.percent = int_of(tp, &at, "percent", &[5, 10, 15, 20])?.map(|v| v as u8);
        p.metric = choice(
            tp,
            &at,
            "metric",
            &[("late", Metric::Late), ("early", Metric::Early)],
        )?;
    }
    Ok(Family::Attendance(p))
}

pub(super) fn data_completion(args: &Value, at: &str) -> Result<Family, String> {
    use data_completion::{DataDomain as D, Level, TaskType as T};
    let m = object(args, at, &["domain", "task_type", "difficulty", "rows"])?;
    let domains = [
        D::Sales,
        D::Transactions,
        D::Inventory,
        D::Finance,
        D::Logistics,
        D::Web,
    ]
    .map(|d| (d.name(), d));
    let types = [
        T::QuarterFromMonths,
        T::QoqRate,
        T::TaxFee,
        T::TotalFromItems,
        T::EndingFromFlow,
        T::DailyInterpolation,
        T::AccountBalanceFromDetails,
        T::DepreciationStraightLine,
        T::EtaDistanceSla,
        T::SegmentTimeSum,
        T::RollingAvg,
        T::Funnel,
    ]
    .map(|t| (t.name(), t));
    let domain = choice(m, at, "domain", &domains)?;
    let task_type = choice(m, at, "task_type", &types)?;
    if let (Some(d), Some(t)) = (domain, task_type)
        && t.domain() != d
    {
        return Err(format!(
            "{at}.task_type: `{}` belongs to domain `{}`, not `{}`",
            t.name(),
            t.domain().name(),
            d.name()
        ));
    }
    Ok(Family::DataCompletion(data_completion::Params {
        domain,
        task_type,
        difficulty: choice(
            m,
            at,
            "difficulty",
            &[
                ("very_easy", Level::VeryEasy),
                ("easy", Level::Easy),
                ("medium", Level::Medium),
                ("hard", Level::Hard),
                ("very_hard", Level::VeryHard),
            ],
        )?,
        rows: int_in(m, at, "rows", 12, 400)?.map(|v| v as usize),
    }))
}

pub(super) fn event(args: &Value, at: &str) -> Result<Family, String> {
    use event_planning::{Level as L, Mode};
    use tbsim_scenario::OutingMetric as M;
    let m = object(args, at, &["task_type_name", "task_params"])?;
    let optimal = choice(
        m,
        at,
        "task_type_name",
        &[
            ("general_event_planning", false),
            ("optimal_event_planning", true),
        ],
    )?;
    let Some(v) = m.get("task_params").filter(|v| !v.is_null()) else {
        return match optimal {
            None => Ok(Family::EventPlanning(event_planning::Params::default())),
            Some(_) => Err(format!("{at}.task_params: missing")),
        };
    };
    let at_ = format!("{at}.task_params");
    let allowed: &[&str] = match optimal {
        None => &["department", "n_loc", "n_res"],
        Some(false) => &[
            "department",
            "n_loc",
            "n_res",
            "plan",
            "metrics",
            "end_time",
        ],
        Some(true) => &["department", "n_loc", "n_res", "mode"],
    };
    let tp = object(v, &at_, allowed)?;
    let at = at_;
    let mut p = event_planning::Params {
        department: department(tp, &at, "department", false)?,
        n_loc: int_in(tp, &at, "n_loc", 3, 12)?.map(|v| v as usize),
        n_res: int_in(tp, &at, "n_res", 1, 20)?.map(|v| v as usize),
        ..Default::default()
    };
    match optimal {
        None => {}
        Some(true) => {
            let modes = [
                ("highest_interest", (Mode::HighestInterest, L::C1)),
                ("lowest_cost", (Mode::LowestCost, L::C2)),
                ("shortest_distance", (Mode::ShortestDistance, L::C3)),
                ("highest_score", (Mode::HighestScore, L::C4)),
            ];
            let (mode, level) = choice(tp, &at, "mode", &modes)?
                .ok_or_else(|| format!("{at}.mode: missing; expected one of: {}", names(&modes)))?;
            p.mode = Some(mode);
            p.level = Some(level);
        }
        Some(false) => {
            let table = [
                ("interest_score", M::Interest),
                ("cost_per_person", M::Cost),
                ("total_travel_distance", M::Distance),
                ("overall_score", M::Score),
            ];
            let metrics = list(tp, &at, "metrics", |s, at| {
                table
                    .iter()
                    .find(|(n, _)| norm(n) == norm(s))
                    .map(|(_, v)| *v)
                    .ok_or_else(|| format!("{at}: `{s}` is not one of: {}", names(&table)))
            })?
            .ok_or_else(|| {
                format!(
                    "{at}.metrics: missing; expected a list of: {}",
                    names(&table)
                )
            })?;
            distinct(&metrics, &format!("{at}.metrics"))?;
            // The reference's plan names places of its one fixed world; here every
            // instance draws its own map, so a given plan means "the itinerary is
            // given" (an A level) and the itinerary is drawn from the instance's map.
            let plan = match tp.get("plan").filter(|v| !v.is_null()) {
                None => false,
                Some(v) => {
                    let pat = format!("{at}.plan");
                    let pm = object(v, &pat, &["morning", "lunch", "afternoon"])?;
                    for k in ["morning", "lunch", "afternoon"] {
                        string(pm, &pat, k)?
                            .filter(|s| !s.trim().is_empty())
                            .ok_or_else(|| format!("{pat}.{k}: expected a place name"))?;
                    }
                    true
                }
            };
            let end_time = string(tp, &at, "end_time")?
                .map(|t| {
                    if hhmm(t) {
                        Ok(t.to_owned())
                    } else {
                        Err(format!("{at}.end_time: `{t}` is not HH:MM"))
                    }
                })
                .transpose()?;
            // The reference stores no level: it follows from the metrics (A1/B1: 1-2 of
            // interest, cost and distance; A2/B2: 2-3 of them; A3/B3: all four; A4/B4: all
            // four and the deadline). Two of the three fit levels 1 and 2 alike, which
            // differ only in what they would draw; level 1 is taken.
            let n = metrics.len();
            let number = if end_time.is_some() {
                if n != 4 {
                    return Err(format!(
                        "{at}.end_time: only with all four metrics (levels A4/B4); found {n}"
                    ));
                }
                4
            } else if n == 4 {
                3
            } else if n == 0 || metrics.contains(&M::Score) {
                return Err(format!(
                    "{at}.metrics: expected 1-3 of interest_score, cost_per_person and total_travel_distance, or all four metrics"
                ));
            } else if n == 3 {
                2
            } else {
                1
            };
            p.level = Some(match (plan, number) {
                (true, 1) => L::A1,
                (true, 2) => L::A2,
                (true, 3) => L::A3,
                (true, _) => L::A4,
                (false, 1) => L::B1,
                (false, 2) => L::B2,
                (false, 3) => L::B3,
                (false, _) => L::B4,
            });
            p.metrics = Some(metrics);
            p.end_time = end_time;
        }
    }
    Ok(Family::EventPlanning(p))
}

pub(super) fn meeting_book(args: &Value, at: &str) -> Result<Family, String> {
    use meeting_book::Kind;
    let m = object(
        args,
        at,
        &["task_type", "start_time", "last_time", "conflict_nums"],
    )?;
    let start = string(m, at, "start_time")?
        .map(|s| {
            let t = clock(s, &format!("{at}.start_time"))?;
            if ["13:00", "14:30", "15:00"].contains(&t.as_str()) {
                Ok(t)
            } else {
                Err(format!(
                    "{at}.start_time: `{s}` is out of range; expected 13:00, 14:30 or 15:00"
                ))
            }
        })
        .transpose()?;
    let duration_min = number(m, at, "last_time")?
        .map(|h| {
            let min = h * 60.0;
            [30.0, 60.0, 90.0, 120.0]
                .contains(&min)
                .then_some(min as u32)
                .ok_or_else(|| {
                    format!("{at}.last_time: {h} is out of range; expected 0.5, 1, 1.5 or 2 hours")
                })
        })
        .transpose()?;
    Ok(Family::MeetingBook(meeting_book::Params {
        kind: choice(
            m,
            at,
            "task_type",
            &[("department", Kind::Department), ("manager", Kind::Manager)],
        )?,
        start,
        duration_min,
        conflicts: int_in(m, at, "conflict_nums", 1, 3)?.map(|v| v as u8),
    }))
}

/// One of `allowed`, compared case-insensitively.
fn named(s: &str, at: &str, allowed: &[&'static str]) -> Result<&'static str, String> {
    allowed
        .iter()
        .find(|a| a.eq_ignore_ascii_case(s.trim()))
        .copied()
        .ok_or_else(|| format!("{at}: `{s}` is not one of: {}", allowed.join(", ")))
}

/// The reference's one-element lists (`["Master's"]`); a bare string is taken too.
fn single<'a>(v: &'a Value, at: &str) -> Result<&'a str, String> {
    match v {
        Value::String(s) => Ok(s),
        Value::Array(a) if a.len() == 1 => a[0]
            .as_str()
            .ok_or_else(|| format!("{at}[0]: expected a string")),
        _ => Err(format!("{at}: expected a one-element list of strings")),
    }
}

pub(super) fn resume(args: &Value, at: &str) -> Result<Family, String> {
    use resume_select::{DEGREES, MAJORS, POSITIONS, SKILLS, YEARS};
    let m = object(args, at, &["requirement", "position", "number_of_resumes"])?;
    let mut p = resume_select::Params {
        resumes: int_of(m, at, "number_of_resumes", &[6, 9, 12])?.map(|v| v as usize),
        ..Default::default()
    };
    if let Some(v) = m.get("position").filter(|v| !v.is_null()) {
        let at = format!("{at}.position");
        p.position = Some(named(single(v, &at)?, &at, &POSITIONS)?.to_owned());
    }
    if let Some(v) = m.get("requirement").filter(|v| !v.is_null()) {
        let at = format!("{at}.requirement");
        let r = v.as_array().filter(|r| r.len() == 4).ok_or_else(|| {
            format!("{at}: expected [[education], [major], [years], [skills...]]")
        })?;
        let a0 = format!("{at}[0]");
        p.education = Some(named(single(&r[0], &a0)?, &a0, &DEGREES)?.to_owned());
        let a1 = format!("{at}[1]");
        p.major = Some(named(single(&r[1], &a1)?, &a1, &MAJORS)?.to_owned());
        let a2 = format!("{at}[2]");
        let y = single(&r[2], &a2)?;
        let years = y
            .trim()
            .strip_suffix("years")
            .or_else(|| y.trim().strip_suffix("year"))
            .and_then(|n| n.trim().parse::<u32>().ok())
            .filter(|n| YEARS.contains(n))
            .ok_or_else(|| format!("{a2}: `{y}` is not one of: 1 year, 3 years, 5 years"))?;
        p.years = Some(years);
        let a3 = format!("{at}[3]");
        let keys: Vec<&'static str> = SKILLS.iter().map(|s| s.0).collect();
        let skills = r[3]
            .as_array()
            .filter(|a| (1..=3).contains(&a.len()))
            .ok_or_else(|| format!("{a3}: expected a list of 1-3 skills"))?
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let at = format!("{a3}[{i}]");
                let s = s
                    .as_str()
                    .ok_or_else(|| format!("{at}: expected a string"))?;
                named(s, &at, &keys).map(str::to_owned)
            })
            .collect::<Result<Vec<_>, _>>()?;
        distinct(&skills, &a3)?;
        p.skills = Some(skills);
    }
    Ok(Family::ResumeSelect(p))
}

pub(super) fn sales(args: &Value, at: &str) -> Result<Family, String> {
    use sales::{Direction, Kind as K, Mode};
    let kinds = [
        ("top_sales_employee", K::TopSalesEmployee),
        ("sales_statistics", K::SalesStatistics),
        ("cross_depts_extreme_employee", K::CrossDeptsExtremeEmployee),
        ("per_dept_extreme_employee", K::PerDeptExtremeEmployee),
        ("per_dept_avg_sales", K::PerDeptAvgSales),
        ("per_dept_top_n", K::PerDeptTopN),
        ("cross_depts_top_n", K::CrossDeptsTopN),
        ("dept_person_qoq_count", K::DeptPersonQoqCount),
        ("all_depts_qoq_count", K::AllDeptsQoqCount),
    ];
    let m = object(args, at, &["task_type", "task_params"])?;
    let kind = choice(m, at, "task_type", &kinds)?;
    let mut p = sales::Params {
        kind,
        ..Default::default()
    };
    let Some(v) = m.get("task_params").filter(|v| !v.is_null()) else {
        return Ok(Family::Sales(p));
    };
    let Some(kind) = kind else {
        return Err(format!(
            "{at}.task_type: missing; task_params need it (one of: {})",
            names(&kinds)
        ));
    };
    let allowed: &[&str] = match kind {
        K::TopSalesEmployee | K::SalesStatistics => &["department", "quarter"],
        K::CrossDeptsExtremeEmployee | K::PerDeptExtremeEmployee => {
            &["departments", "mode", "quarter"]
        }
        K::PerDeptAvgSales => &["departments", "quarter"],
        K::PerDeptTopN | K::CrossDeptsTopN => &["departments", "n", "quarter"],
        K::DeptPersonQoqCount => &["department", "direction", "quarter"],
        K::AllDeptsQoqCount => &["direction", "quarter"],
    };
    let at = format!("{at}.task_params");
    let tp = object(v, &at, allowed)?;
    // The reference's Sales_1..Sales_3 are this family's three teams, in order.
    let team = |s: &str, at: &str| -> Result<String, String> {
        let n = norm(s);
        ["sales_1", "sales_2", "sales_3"]
            .iter()
            .position(|x| *x == n)
            .or_else(|| sales::TEAMS.iter().position(|t| norm(t) == n))
            .map(|i| sales::TEAMS[i].to_owned())
            .ok_or_else(|| {
                format!(
                    "{at}: `{s}` is not a sales team; expected Sales_1, Sales_2, Sales_3 (or {})",
                    sales::TEAMS.join(", ")
                )
            })
    };
    p.department = string(tp, &at, "department")?
        .map(|s| team(s, &format!("{at}.department")))
        .transpose()?;
    p.departments = list(tp, &at, "departments", team)?;
    if let Some(ds) = &p.departments {
        distinct(ds, &format!("{at}.departments"))?;
        if !(2..=3).contains(&ds.len()) {
            return Err(format!(
                "{at}.departments: expected 2-3 teams, found {}",
                ds.len()
            ));
        }
    }
    p.mode = choice(
        tp,
        &at,
        "mode",
        &[("top", Mode::Top), ("bottom", Mode::Bottom)],
    )?;
    p.direction = choice(
        tp,
        &at,
        "direction",
        &[("up", Direction::Up), ("down", Direction::Down)],
    )?;
    let lowest = if matches!(kind, K::DeptPersonQoqCount | K::AllDeptsQoqCount) {
        2
    } else {
        1
    };
    p.quarter = int_in(tp, &at, "quarter", lowest, 4)?.map(|v| v as u8);
    p.n = int_in(tp, &at, "n", 1, 3)?.map(|v| v as u8);
    Ok(Family::Sales(p))
}

pub(super) fn website(args: &Value, at: &str) -> Result<Family, String> {
    match args.as_object() {
        Some(m) if m.is_empty() => Ok(Family::WebsiteMonitor(website_monitor::Params::default())),
        _ => Err(format!(
            "{at}: Website Monitor takes no arguments; expected null"
        )),
    }
}

/// Maps one reference task (at JSON path `at`) to a family.
pub fn family_of(name: &str, args: &Value, at: &str) -> Result<Family, String> {
    let args = if args.is_null() {
        &Value::Object(Map::new())
    } else {
        args
    };
    let aat = format!("{at}.arguments");
    let at = aat.as_str();
    match super::registry::by_reference_name(name).and_then(|e| e.reference()) {
        Some(r) => (r.import)(args, at),
        None => Err(format!(
            "{}.name: unknown task name `{name}`; known: {}",
            at.trim_end_matches(".arguments"),
            super::registry::reference_names()
                .iter()
                .map(|(n, _)| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

fn slug(s: &str) -> String {
    super::company::slug(s)
}

/// Converts a reference config into a suite generated with `seed`.
pub fn import(config: &Value, seed: u64) -> Result<Suite, String> {
    let top = object(config, "$", &["version", "datetime", "scenarios"])?;
    let scenarios = top
        .get("scenarios")
        .and_then(Value::as_array)
        .ok_or("$.scenarios: expected an array")?;
    let mut out = Vec::with_capacity(scenarios.len());
    for (i, sc) in scenarios.iter().enumerate() {
        let at = format!("$.scenarios[{i}]");
        let sm = object(sc, &at, &["name", "days"])?;
        let name = string(sm, &at, "name")?.ok_or_else(|| format!("{at}.name: missing"))?;
        let days = sm
            .get("days")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{at}.days: expected an array"))?;
        let mut plans = Vec::with_capacity(days.len());
        let mut date = None;
        for (d, day) in days.iter().enumerate() {
            let dat = format!("{at}.days[{d}]");
            let dm = object(day, &dat, &["name", "tasks"])?;
            let tasks = dm
                .get("tasks")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{dat}.tasks: expected an array"))?;
            let mut plan_tasks = Vec::with_capacity(tasks.len());
            for (t, task) in tasks.iter().enumerate() {
                let tat = format!("{dat}.tasks[{t}]");
                let tm = object(task, &tat, &["name", "arguments", "deadline"])?;
                let tname =
                    string(tm, &tat, "name")?.ok_or_else(|| format!("{tat}.name: missing"))?;
                let family = family_of(tname, tm.get("arguments").unwrap_or(&Value::Null), &tat)?;
                // The reference puts every day on the same date with a 20:00 deadline;
                // days here are consecutive, so only the time of day is kept.
                let deadline = match string(tm, &tat, "deadline")? {
                    Some(dl) => {
                        let (dd, tt) = dl.split_once('T').ok_or_else(|| {
                            format!("{tat}.deadline: expected YYYY-MM-DDTHH:MM:SS")
                        })?;
                        date.get_or_insert_with(|| dd.to_owned());
                        Some(tt.get(..5).unwrap_or(tt).to_owned())
                    }
                    None => None,
                };
                plan_tasks.push(TaskPlan {
                    id: format!("d{}-{}", d + 1, slug(tname)),
                    family,
                    release: ReleasePlan::Start,
                    deadline,
                    priority: Priority::Normal,
                });
            }
            plans.push(DayPlan { tasks: plan_tasks });
        }
        out.push(ScenarioPlan {
            name: name.to_owned(),
            description: format!("Imported from the reference benchmark config (scenario {name})."),
            date: date.unwrap_or_else(|| "2025-10-01".into()),
            start: "08:00".into(),
            end: "20:00".into(),
            company_size: 50,
            tasks: Vec::new(),
            days: plans,
        });
    }
    Ok(Suite {
        name: "evoenv-import".into(),
        seed,
        scenarios: out,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_arguments_exactly_and_rejects_the_unknown() {
        let f = family_of("Meeting Attend", &json!({"meeting_start_time": "2025-10-01T09:30:00", "meeting_last_time": 1.5, "task_type": "check_sum", "task_level": 3}), "$").unwrap();
        assert_eq!(
            f,
            Family::MeetingAttend(meeting_attend::Params {
                start: Some("09:30".into()),
                duration_min: Some(90),
                kind: Some(meeting_attend::Kind::CheckSum),
                level: Some(3)
            })
        );
        let f = family_of(
            "KB Link Fix",
            &json!({"task_params": {"difficulty": "hard"}}),
            "$",
        )
        .unwrap();
        assert_eq!(
            f,
            Family::KbFix(kb_fix::Params {
                difficulty: Some(kb_fix::Level::Hard),
                ..Default::default()
            })
        );
        assert!(
            family_of(
                "Transaction Data Review",
                &json!({"num_normal_transactions": 3, "num_abnormal": 1}),
                "$.t"
            )
            .unwrap_err()
            .contains("$.t.arguments.num_abnormal: unknown argument")
        );
        assert!(
            family_of("Coffee Run", &json!(null), "$")
                .unwrap_err()
                .contains("unknown task name `Coffee Run`")
        );
        assert!(
            family_of(
                "KB Link Fix",
                &json!({"task_params": {"difficulty": "extreme"}}),
                "$"
            )
            .unwrap_err()
            .contains("extreme")
        );
    }

    /// A real config, or `None` (with a note) where the reference is not checked out.
    fn config(file: &str) -> Option<Value> {
        let path = format!(
            "{}/../../shared/reference/evoenv-configs/{file}",
            env!("CARGO_MANIFEST_DIR")
        );
        match std::fs::read_to_string(&path) {
            Ok(text) => Some(serde_json::from_str(&text).expect("the config is JSON")),
            Err(e) => {
                eprintln!("note: {path} not readable ({e}); skipping");
                None
            }
        }
    }

    fn map(name: &str, args: Value) -> Family {
        family_of(name, &args, "$.t").unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The error for `args`, which must name `path` and contain `what`.
    fn fails(name: &str, args: Value, path: &str, what: &str) {
        let e = family_of(name, &args, "$.t").expect_err(name);
        assert!(
            e.starts_with(&format!("{path}:")) && e.contains(what),
            "{name}: `{e}` should name {path} and say {what}"
        );
    }

    #[test]
    fn every_task_of_both_real_configs_imports() {
        for file in ["traineebench_config.json", "traineebench_cl_config.json"] {
            let Some(cfg) = config(file) else { return };
            let mut seen = std::collections::BTreeMap::new();
            for (i, sc) in cfg["scenarios"].as_array().unwrap().iter().enumerate() {
                for (d, day) in sc["days"].as_array().unwrap().iter().enumerate() {
                    for (t, task) in day["tasks"].as_array().unwrap().iter().enumerate() {
                        let name = task["name"].as_str().unwrap();
                        let at = format!("$.scenarios[{i}].days[{d}].tasks[{t}]");
                        let f = family_of(name, &task["arguments"], &at)
                            .unwrap_or_else(|e| panic!("{file}: {e}"));
                        let key = super::super::registry::by_reference_name(name)
                            .unwrap()
                            .key();
                        assert_eq!(f.key(), key, "{at}");
                        *seen.entry(name).or_insert(0) += 1;
                    }
                }
            }
            assert_eq!(
                seen.len(),
                super::super::registry::reference_names().len(),
                "{file}: {seen:?}"
            );
            let suite = import(&cfg, 7).unwrap_or_else(|e| panic!("{file}: {e}"));
            assert_eq!(suite.scenarios.len(), 50);
        }
    }

    #[test]
    fn ads_strategy_maps_city_and_difficulty() {
        use ads_strategy::{Level, Params};
        let f = map(
            "ADs Strategy Plan",
            json!({"task_params": {"city": "XiAn", "difficulty": "easy"}}),
        );
        assert_eq!(
            f,
            Family::AdsStrategy(Params {
                difficulty: Some(Level::Easy),
                city: Some("Xi'an".into()),
                ..Params::default()
            })
        );
        let f = map(
            "ADs Strategy Plan",
            json!({"task_params": {"city": "Shenzhen", "difficulty": "very hard"}}),
        );
        assert_eq!(
            f,
            Family::AdsStrategy(Params {
                difficulty: Some(Level::VeryHard),
                city: Some("Shenzhen".into()),
                ..Params::default()
            })
        );
        let f = map(
            "ADs Strategy Plan",
            json!({"task_params": {"budget": 9000, "heatmap_sigma_min": 4, "heatmap_sigma_max": 8.5, "channel_mix": "balanced", "target_group": "seniors_60_plus"}}),
        );
        assert_eq!(
            f,
            Family::AdsStrategy(Params {
                budget: Some(9000),
                heatmap_sigma: Some((4.0, 8.5)),
                channel_mix: Some(ads_strategy::ChannelMix::Balanced),
                target_group: Some(ads_strategy::Group::Seniors),
                ..Params::default()
            })
        );
        fails(
            "ADs Strategy Plan",
            json!({"task_params": {"city": "Wuhan", "region": "east"}}),
            "$.t.arguments.task_params.region",
            "unknown argument",
        );
        fails(
            "ADs Strategy Plan",
            json!({"task_params": {"city": "Atlantis"}}),
            "$.t.arguments.task_params.city",
            "Shanghai",
        );
        fails(
            "ADs Strategy Plan",
            json!({"task_params": {"difficulty": "extreme"}}),
            "$.t.arguments.task_params.difficulty",
            "very easy",
        );
        fails(
            "ADs Strategy Plan",
            json!({"task_params": {"num_channels": 200}}),
            "$.t.arguments.task_params.num_channels",
            "expected 4 to 60",
        );
    }

    #[test]
    fn attendance_maps_type_department_level_and_options() {
        use attendance::{Level, Metric, Mode, Params, StatType};
        let f = map(
            "Attendance Statistics",
            json!({"task_type_name": "top_percent_employees", "task_params": {"percent": 20, "metric": "late", "department": "all"}, "difficulty": {"level": "L3"}}),
        );
        assert_eq!(
            f,
            Family::Attendance(Params {
                task_type: Some(StatType::TopPercentEmployees),
                department: Some("all".into()),
                level: Some(Level::L3),
                mode: None,
                percent: Some(20),
                metric: Some(Metric::Late),
            })
        );
        let f = map(
            "Attendance Statistics",
            json!({"task_type_name": "total_absence_days", "task_params": {"department": "Sales_1"}, "difficulty": {"level": "L2"}}),
        );
        assert_eq!(
            f,
            Family::Attendance(Params {
                task_type: Some(StatType::TotalAbsenceDays),
                department: Some("Sales".into()),
                level: Some(Level::L2),
                mode: None,
                percent: None,
                metric: None,
            })
        );
        let f = map(
            "Attendance Statistics",
            json!({"task_type_name": "late_early_employee", "task_params": {"mode": "most_early", "department": "Engineering"}, "difficulty": {"level": "L4"}}),
        );
        assert_eq!(
            f,
            Family::Attendance(Params {
                task_type: Some(StatType::LateEarlyEmployee),
                department: Some("Engineering".into()),
                level: Some(Level::L4),
                mode: Some(Mode::MostEarly),
                percent: None,
                metric: None,
            })
        );
        fails(
            "Attendance Statistics",
            json!({"task_type_name": "total_absence_days", "task_params": {"department": "Sales_1", "team": "x"}}),
            "$.t.arguments.task_params.team",
            "unknown argument",
        );
        fails(
            "Attendance Statistics",
            json!({"task_type_name": "top_percent_employees", "task_params": {"percent": 25, "metric": "late"}}),
            "$.t.arguments.task_params.percent",
            "5, 10, 15, 20",
        );
        fails(
            "Attendance Statistics",
            json!({"task_type_name": "total_absence_days", "difficulty": {"level": "L6"}}),
            "$.t.arguments.difficulty.level",
            "L1",
        );
        fails(
            "Attendance Statistics",
            json!({"task_type_name": "total_absence_days", "task_params": {"department": "Sales_4"}}),
            "$.t.arguments.task_params.department",
            "Sales_1",
        );
        fails(
            "Attendance Statistics",
            json!({"task_type_name": "total_absence_days", "task_params": {"mode": "most_late"}}),
            "$.t.arguments.task_params.mode",
            "late_early_employee",
        );
    }

    #[test]
    fn data_completion_maps_domain_type_and_difficulty() {
        use data_completion::{DataDomain, Level, Params, TaskType};
        let f = map(
            "Data Completion",
            json!({"domain": "sales", "task_type": "qoq_rate", "difficulty": "very_hard"}),
        );
        assert_eq!(
            f,
            Family::DataCompletion(Params {
                domain: Some(DataDomain::Sales),
                task_type: Some(TaskType::QoqRate),
                difficulty: Some(Level::VeryHard),
                rows: None,
            })
        );
        let f = map(
            "Data Completion",
            json!({"domain": "transactions", "task_type": "tax_fee", "difficulty": "medium"}),
        );
        assert_eq!(
            f,
            Family::DataCompletion(Params {
                domain: Some(DataDomain::Transactions),
                task_type: Some(TaskType::TaxFee),
                difficulty: Some(Level::Medium),
                rows: None,
            })
        );
        fails(
            "Data Completion",
            json!({"domain": "web", "task_type": "funnel", "seed": 3}),
            "$.t.arguments.seed",
            "unknown argument",
        );
        fails(
            "Data Completion",
            json!({"domain": "web", "task_type": "tax_fee"}),
            "$.t.arguments.task_type",
            "belongs to domain `transactions`",
        );
        fails(
            "Data Completion",
            json!({"domain": "web", "difficulty": "extreme"}),
            "$.t.arguments.difficulty",
            "very_easy",
        );
        fails(
            "Data Completion",
            json!({"domain": "web", "rows": 5}),
            "$.t.arguments.rows",
            "expected 12 to 400",
        );
    }

    #[test]
    fn event_planning_maps_type_metrics_plan_and_deadline_to_a_level() {
        use event_planning::{Level, Mode, Params};
        use tbsim_scenario::OutingMetric as M;
        let f = map(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"department": "Engineering", "n_loc": 6, "n_res": 10, "plan": {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"}, "metrics": ["interest_score", "cost_per_person", "total_travel_distance", "overall_score"], "end_time": "17:30"}}),
        );
        assert_eq!(
            f,
            Family::EventPlanning(Params {
                level: Some(Level::A4),
                department: Some("Engineering".into()),
                n_loc: Some(6),
                n_res: Some(10),
                plan: None,
                metrics: Some(vec![M::Interest, M::Cost, M::Distance, M::Score]),
                end_time: Some("17:30".into()),
                mode: None,
            })
        );
        let f = map(
            "Event Planning",
            json!({"task_type_name": "optimal_event_planning", "task_params": {"department": "Marketing", "n_loc": 6, "n_res": 10, "mode": "lowest_cost"}}),
        );
        assert_eq!(
            f,
            Family::EventPlanning(Params {
                level: Some(Level::C2),
                department: Some("Marketing".into()),
                n_loc: Some(6),
                n_res: Some(10),
                plan: None,
                metrics: None,
                end_time: None,
                mode: Some(Mode::LowestCost),
            })
        );
        let f = map(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"department": "Engineering", "n_loc": 6, "n_res": 10, "plan": {"morning": "Riverside Wetland", "lunch": "Maple · Hotpot", "afternoon": "Stonegate Eco Park"}, "metrics": ["total_travel_distance", "cost_per_person", "interest_score"]}}),
        );
        assert_eq!(
            f,
            Family::EventPlanning(Params {
                level: Some(Level::A2),
                department: Some("Engineering".into()),
                n_loc: Some(6),
                n_res: Some(10),
                plan: None,
                metrics: Some(vec![M::Distance, M::Cost, M::Interest]),
                end_time: None,
                mode: None,
            })
        );
        let f = map(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"department": "Sales_1", "n_loc": 6, "n_res": 10, "metrics": ["cost_per_person", "interest_score"]}}),
        );
        assert_eq!(
            f,
            Family::EventPlanning(Params {
                level: Some(Level::B1),
                department: Some("Sales".into()),
                n_loc: Some(6),
                n_res: Some(10),
                plan: None,
                metrics: Some(vec![M::Cost, M::Interest]),
                end_time: None,
                mode: None,
            })
        );
        fails(
            "Event Planning",
            json!({"task_type_name": "optimal_event_planning", "task_params": {"mode": "lowest_cost", "metrics": ["cost_per_person"]}}),
            "$.t.arguments.task_params.metrics",
            "unknown argument",
        );
        fails(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"n_loc": 40, "metrics": ["cost_per_person"]}}),
            "$.t.arguments.task_params.n_loc",
            "expected 3 to 12",
        );
        fails(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"metrics": ["cost_per_person", "fun"]}}),
            "$.t.arguments.task_params.metrics[1]",
            "interest_score",
        );
        fails(
            "Event Planning",
            json!({"task_type_name": "general_event_planning", "task_params": {"metrics": ["cost_per_person"], "end_time": "17:30"}}),
            "$.t.arguments.task_params.end_time",
            "all four metrics",
        );
        fails(
            "Event Planning",
            json!({"task_type_name": "optimal_event_planning", "task_params": {"mode": "cheapest"}}),
            "$.t.arguments.task_params.mode",
            "lowest_cost",
        );
    }

    #[test]
    fn meeting_book_maps_type_slot_and_conflicts() {
        use meeting_book::{Kind, Params};
        let f = map(
            "Meeting Book",
            json!({"task_type": "manager", "start_time": "2025-10-01T15:00:00", "last_time": 0.5, "conflict_nums": 3}),
        );
        assert_eq!(
            f,
            Family::MeetingBook(Params {
                kind: Some(Kind::Manager),
                start: Some("15:00".into()),
                duration_min: Some(30),
                conflicts: Some(3),
            })
        );
        let f = map(
            "Meeting Book",
            json!({"task_type": "department", "start_time": "2025-10-01T14:30:00", "last_time": 2.0, "conflict_nums": 1}),
        );
        assert_eq!(
            f,
            Family::MeetingBook(Params {
                kind: Some(Kind::Department),
                start: Some("14:30".into()),
                duration_min: Some(120),
                conflicts: Some(1),
            })
        );
        fails(
            "Meeting Book",
            json!({"task_type": "manager", "room": "Room_06"}),
            "$.t.arguments.room",
            "unknown argument",
        );
        fails(
            "Meeting Book",
            json!({"conflict_nums": 4}),
            "$.t.arguments.conflict_nums",
            "expected 1 to 3",
        );
        fails(
            "Meeting Book",
            json!({"start_time": "2025-10-01T09:00:00"}),
            "$.t.arguments.start_time",
            "13:00, 14:30 or 15:00",
        );
        fails(
            "Meeting Book",
            json!({"last_time": 0.75}),
            "$.t.arguments.last_time",
            "0.5, 1, 1.5 or 2 hours",
        );
        fails(
            "Meeting Book",
            json!({"task_type": "team"}),
            "$.t.arguments.task_type",
            "department, manager",
        );
    }

    #[test]
    fn resume_select_maps_requirements_position_and_count() {
        use resume_select::Params;
        let f = map(
            "Resume Select",
            json!({"requirement": [["Master's"], ["Computer Science"], ["5 years"], ["c++"]], "position": ["Software Engineer"], "number_of_resumes": 12}),
        );
        assert_eq!(
            f,
            Family::ResumeSelect(Params {
                position: Some("Software Engineer".into()),
                resumes: Some(12),
                education: Some("Master's".into()),
                major: Some("Computer Science".into()),
                years: Some(5),
                skills: Some(vec!["c++".into()]),
                suitable: None,
            })
        );
        let f = map(
            "Resume Select",
            json!({"requirement": [["Doctoral"], ["Electrical Engineering"], ["1 year"], ["redis", "deep learning"]], "position": ["Software Developer"], "number_of_resumes": 6}),
        );
        assert_eq!(
            f,
            Family::ResumeSelect(Params {
                position: Some("Software Developer".into()),
                resumes: Some(6),
                education: Some("Doctoral".into()),
                major: Some("Electrical Engineering".into()),
                years: Some(1),
                skills: Some(vec!["redis".into(), "deep learning".into()]),
                suitable: None,
            })
        );
        fails(
            "Resume Select",
            json!({"position": ["Software Engineer"], "salary": 1}),
            "$.t.arguments.salary",
            "unknown argument",
        );
        fails(
            "Resume Select",
            json!({"number_of_resumes": 30}),
            "$.t.arguments.number_of_resumes",
            "6, 9, 12",
        );
        fails(
            "Resume Select",
            json!({"requirement": [["Master's"], ["Physics"], ["1 year"], ["java"]]}),
            "$.t.arguments.requirement[1]",
            "Computer Science",
        );
        fails(
            "Resume Select",
            json!({"requirement": [["Master's"], ["Mathematics"], ["2 years"], ["java"]]}),
            "$.t.arguments.requirement[2]",
            "3 years",
        );
        fails(
            "Resume Select",
            json!({"requirement": [["Master's"], ["Mathematics"], ["1 year"], ["java", "cobol"]]}),
            "$.t.arguments.requirement[3][1]",
            "c++",
        );
        fails(
            "Resume Select",
            json!({"position": ["Software Engineer", "Software Developer"]}),
            "$.t.arguments.position",
            "one-element list",
        );
    }

    #[test]
    fn sales_maps_type_teams_and_options() {
        use sales::{Direction, Kind, Mode, Params};
        let f = map(
            "Sales Analysis",
            json!({"task_type": "per_dept_avg_sales", "task_params": {"quarter": 2, "departments": ["Sales_3", "Sales_2", "Sales_1"]}}),
        );
        assert_eq!(
            f,
            Family::Sales(Params {
                kind: Some(Kind::PerDeptAvgSales),
                department: None,
                departments: Some(vec!["West".into(), "East".into(), "North".into()]),
                mode: None,
                direction: None,
                quarter: Some(2),
                n: None,
            })
        );
        let f = map(
            "Sales Analysis",
            json!({"task_type": "dept_person_qoq_count", "task_params": {"department": "Sales_3", "quarter": 4, "direction": "up"}}),
        );
        assert_eq!(
            f,
            Family::Sales(Params {
                kind: Some(Kind::DeptPersonQoqCount),
                department: Some("West".into()),
                departments: None,
                mode: None,
                direction: Some(Direction::Up),
                quarter: Some(4),
                n: None,
            })
        );
        let f = map(
            "Sales Analysis",
            json!({"task_type": "cross_depts_extreme_employee", "task_params": {"departments": ["Sales_2", "Sales_3"], "mode": "bottom"}}),
        );
        assert_eq!(
            f,
            Family::Sales(Params {
                kind: Some(Kind::CrossDeptsExtremeEmployee),
                department: None,
                departments: Some(vec!["East".into(), "West".into()]),
                mode: Some(Mode::Bottom),
                direction: None,
                quarter: None,
                n: None,
            })
        );
        let f = map(
            "Sales Analysis",
            json!({"task_type": "cross_depts_top_n", "task_params": {"departments": ["Sales_2", "Sales_3", "Sales_1"], "n": 1}}),
        );
        assert_eq!(
            f,
            Family::Sales(Params {
                kind: Some(Kind::CrossDeptsTopN),
                department: None,
                departments: Some(vec!["East".into(), "West".into(), "North".into()]),
                mode: None,
                direction: None,
                quarter: None,
                n: Some(1),
            })
        );
        fails(
            "Sales Analysis",
            json!({"task_type": "cross_depts_top_n", "task_params": {"departments": ["Sales_2", "Sales_3"], "mode": "top"}}),
            "$.t.arguments.task_params.mode",
            "unknown argument",
        );
        fails(
            "Sales Analysis",
            json!({"task_type": "all_depts_qoq_count", "task_params": {"quarter": 1, "direction": "up"}}),
            "$.t.arguments.task_params.quarter",
            "expected 2 to 4",
        );
        fails(
            "Sales Analysis",
            json!({"task_type": "per_dept_top_n", "task_params": {"departments": ["Sales_1", "Sales_4"], "n": 2}}),
            "$.t.arguments.task_params.departments[1]",
            "Sales_1, Sales_2, Sales_3",
        );
        fails(
            "Sales Analysis",
            json!({"task_type": "per_dept_top_n", "task_params": {"departments": ["Sales_1"], "n": 2}}),
            "$.t.arguments.task_params.departments",
            "2-3 teams",
        );
    }

    #[test]
    fn website_monitor_takes_no_arguments() {
        assert_eq!(
            map("Website Monitor", Value::Null),
            Family::WebsiteMonitor(website_monitor::Params::default())
        );
        assert_eq!(
            map("Website Monitor", json!({})),
            Family::WebsiteMonitor(website_monitor::Params::default())
        );
        fails(
            "Website Monitor",
            json!({"slow_page": "/blog"}),
            "$.t.arguments",
            "expected null",
        );
        fails(
            "Website Monitor",
            json!(3),
            "$.t.arguments",
            "expected null",
        );
    }

    #[test]
    fn the_whole_base_config_generates_and_validates() {
        let Some(cfg) = config("traineebench_config.json") else {
            return;
        };
        let suite = import(&cfg, 20251001).unwrap();
        let t0 = std::time::Instant::now();
        // generate_suite validates every scenario before returning it.
        let files = super::super::generate_suite(&suite).unwrap_or_else(|e| panic!("{e}"));
        eprintln!(
            "generated and validated {} scenarios in {:.2?}",
            files.len(),
            t0.elapsed()
        );
        assert_eq!(files.len(), 50);
        let names: std::collections::BTreeSet<&str> =
            files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), 50);
    }
}
