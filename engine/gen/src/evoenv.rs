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

use super::evoenv_args::{object, string};
use super::{DayPlan, Family, ReleasePlan, ScenarioPlan, Suite, TaskPlan};
use tbsim_scenario::Priority;

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
    use crate::{
        ads_strategy, attendance, data_completion, event_planning, kb_fix, meeting_attend,
        meeting_book, resume_select, sales, website_monitor,
    };
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
