//! Importing the reference implementation's benchmark config (`tbsim gen --from-evoenv`).
//!
//! The format (reference §3.2) is `{version, datetime, scenarios: [{name, days: [{name,
//! tasks: [{name, arguments, deadline}]}]}]}`. Each task name maps to one family and
//! its `arguments` map onto that family's parameters exactly: an unknown task name,
//! an unknown argument or a value outside the family's space is an error naming its
//! JSON path. Generation then draws everything else from `--seed`, so unlike the
//! reference the imported benchmark is reproducible.

use serde_json::{Map, Value};

use super::{
    DayPlan, Family, ReleasePlan, ScenarioPlan, Suite, TaskPlan, kb_fix, meeting_attend,
    transaction_review,
};
use crate::scenario::Priority;

/// Reference task names, in the reference's hub order, with the family they map to.
pub const TASK_NAMES: &[(&str, &str)] = &[
    ("KB Link Fix", "kb_fix"),
    ("Meeting Attend", "meeting_attend"),
    ("Transaction Data Review", "transaction_review"),
];

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

fn kb(args: &Value, at: &str) -> Result<Family, String> {
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

fn meeting(args: &Value, at: &str) -> Result<Family, String> {
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

fn transactions(args: &Value, at: &str) -> Result<Family, String> {
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

/// Maps one reference task (at JSON path `at`) to a family.
pub fn family_of(name: &str, args: &Value, at: &str) -> Result<Family, String> {
    let args = if args.is_null() {
        &Value::Object(Map::new())
    } else {
        args
    };
    let aat = format!("{at}.arguments");
    let at = aat.as_str();
    match name {
        "KB Link Fix" => kb(args, at),
        "Meeting Attend" => meeting(args, at),
        "Transaction Data Review" => transactions(args, at),
        other => Err(format!(
            "{}.name: unknown task name `{other}`; known: {}",
            at.trim_end_matches(".arguments"),
            TASK_NAMES
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
}
