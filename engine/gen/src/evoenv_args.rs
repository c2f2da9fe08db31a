//! The reference config's per-task `arguments`, mapped onto each family's parameters
//! (the [`Reference::import`](super::meta_task::Reference) functions the registry
//! lists; [`evoenv`](super::evoenv) reads the config around them). Split from
//! `evoenv` so the registry can name these without importing the importer, which
//! looks families up in the registry.

use serde_json::{Map, Value};

use super::{
    Family, ads_strategy, attendance, data_completion, event_planning, kb_fix, meeting_attend,
    meeting_book, resume_select, sales, transaction_review, website_monitor,
};

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
