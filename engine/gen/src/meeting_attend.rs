//! Meeting attend: a meeting interrupts the day; attending on time reveals a task.
//!
//! The intern is invited to a department's purchasing sync. Joining within the
//! tolerance around the start (and not before the room opens) is a checkpoint of its
//! own (weight 1); the meeting sets next month's purchasing budget cap, which the
//! intern works out from what is said and records afterwards (an answer, weight 50,
//! so that joining every meeting blindly earns a fifty-first of the task: at a
//! twenty-first, a constant 0.048, the gate's one-sided bound over 200 instances was
//! 0.079, over its 0.05); a second task is announced in the meeting to those present:
//! summarise the purchase requests raised, applying the procurement rules for the
//! `check` kinds.
//! Differences from the reference: attendance has a lower bound (joining opens 5
//! minutes before the start) and cannot move time backwards; `statistics` is scored;
//! the meeting's room and department vary.

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, corpus, pick_distinct, step};
use tbsim_scenario::{
    Check, CheckpointSpec, Content, FileSpec, Gate, MeetingSpec, Record, Release, TaskSpec,
};

/// What the announced task asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    /// Nothing is announced; attending is the whole task.
    None,
    /// List every request.
    Write,
    /// List every request with totals, and the grand total.
    Sum,
    /// List only requests that follow the rules.
    Check,
    /// List reasonable requests with totals, and the grand total.
    CheckSum,
}

/// Parameters; unset ones are drawn uniformly from the reference's space.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// `09:00`, `09:30` or `10:00`.
    #[serde(default)]
    pub start: Option<String>,
    /// 30, 60, 90 or 120 minutes.
    #[serde(default)]
    pub duration_min: Option<u32>,
    /// Task kind.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// Number of unreasonable requests (1-3).
    #[serde(default)]
    pub level: Option<u8>,
}

/// The rules' drive path.
pub const RULES: &str = "drive/finance/procurement_rules.md";
/// Where the summary goes.
pub const SUMMARY: &str = "workspace/procurement_summary.json";

fn summary_path(ctx: &Ctx<'_>) -> String {
    format!("workspace/procurement_summary{}.json", ctx.suffix())
}

/// Where the meeting's decision is recorded.
fn decision_path(ctx: &Ctx<'_>) -> String {
    format!("workspace/purchasing_sync_decision{}.json", ctx.suffix())
}

/// The budget caps a sync may set, and the range every other figure in its notes is
/// drawn from: 4,000 to 12,000 in steps of 250 (33 values).
const CAP_LO: i32 = 4000;
const CAP_HI: i32 = 12000;
const CAP_STEP: i32 = 250;

/// The budget caps a sync may set: 4,000 to 12,000 in steps of 250 (33 values), so a
/// guess is right about 3% of the time and only the meeting tells which it is. Drawn
/// from its own stream so the rest of the instance stays as it was.
fn draw_cap(ctx: &Ctx<'_>) -> u32 {
    4000 + 250 * ctx.rng("meeting/cap").random_range(0..=32u32)
}

/// How the meeting states its decision: never as a figure of its own but as a
/// change to one said before (last month's cap, a colleague's proposal), so the cap
/// is in no text and has to be worked out from what the sentences say (issue 37: an
/// order statistic over the figures gave it away, and where it was said outright,
/// one time in eight, a learned probe told its sentence from the others by its
/// wording).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Decision {
    /// Last month's cap, raised or lowered by a step.
    FromLast,
    /// A colleague's proposal, trimmed by a step.
    FromProposal,
}

/// What the sync says about the budget: the decision among other figures (last
/// month's cap, this month's spend, a proposal, a counter-offer that was turned
/// down), every one drawn from the cap's own range and grid and placed in an order
/// drawn per instance; the cap itself is none of them. Negation words occur in the
/// decision and in the other sentences alike. Its own stream keeps the rest of the
/// instance as it was.
fn budget_notes(
    ctx: &Ctx<'_>,
    organizer: &str,
    dept: &str,
    cap: u32,
    speakers: &[&tbsim_scenario::Person],
) -> String {
    let mut rng = ctx.rng("meeting/figures");
    let cap = cap as i32;
    let step = CAP_STEP * rng.random_range(1..=6);
    // A proposal trimmed to the cap lies a step above it, so it needs that room.
    let form = match rng.random_range(0..8u32) {
        1..=3 if cap + step <= CAP_HI => Decision::FromProposal,
        _ => Decision::FromLast,
    };
    let mut used: Vec<i32> = vec![cap];
    let fresh = |rng: &mut tbsim_core::rng::StreamRng, used: &mut Vec<i32>| -> i32 {
        loop {
            let v = CAP_LO + CAP_STEP * rng.random_range(0..=(CAP_HI - CAP_LO) / CAP_STEP);
            if !used.contains(&v) {
                used.push(v);
                return v;
            }
        }
    };
    // Last month's cap lies a step above the cap (lowered) or below it (raised): the
    // side is drawn, and the range (8,000 wide, a step at most 1,500) always leaves
    // one side open.
    let mut last_sign = 0;
    let last = match form {
        Decision::FromLast => {
            let first = if rng.random_range(0..2u32) == 0 {
                1
            } else {
                -1
            };
            last_sign = if (CAP_LO..=CAP_HI).contains(&(cap + first * step)) {
                first
            } else {
                -first
            };
            let v = cap + last_sign * step;
            used.push(v);
            v
        }
        Decision::FromProposal => fresh(&mut rng, &mut used),
    };
    let proposal = match form {
        Decision::FromProposal => {
            used.push(cap + step);
            cap + step
        }
        Decision::FromLast => fresh(&mut rng, &mut used),
    };
    let counter = fresh(&mut rng, &mut used);
    let spent = fresh(&mut rng, &mut used);
    let who: Vec<usize> = pick_distinct(&mut rng, speakers.len(), 2);
    let (proposer, counterer) = (&speakers[who[0]].name, &speakers[who[1]].name);
    let pick = |rng: &mut tbsim_core::rng::StreamRng, pool: &[String]| -> String {
        pool[rng.random_range(0..pool.len())].clone()
    };
    let decision = match form {
        Decision::FromLast => {
            let (verb, done) = if last_sign > 0 {
                ("lower", "lowered")
            } else {
                ("raise", "raised")
            };
            pick(
                &mut rng,
                &[
                    format!(
                        "Decision: next month's cap is last month's cap, {done} by {step} EUR."
                    ),
                    format!("They agree to {verb} last month's cap by {step} EUR for next month."),
                    format!(
                        "Nobody wants to keep last month's cap as it is: they {verb} it by {step} EUR for next month."
                    ),
                ],
            )
        }
        Decision::FromProposal => pick(
            &mut rng,
            &[
                format!(
                    "Decision: next month's cap is {proposer}'s proposal, trimmed by {step} EUR."
                ),
                format!(
                    "They take {proposer}'s proposal for next month but trim it by {step} EUR."
                ),
                format!(
                    "{proposer}'s proposal is not accepted as it stands: the group trims it by {step} EUR and makes that next month's cap."
                ),
            ],
        ),
    };
    let mut sentences = [
        pick(
            &mut rng,
            &[
                format!("This month {dept} has spent {spent} EUR so far."),
                format!("Spending this month stands at {spent} EUR and nobody disputes it."),
            ],
        ),
        pick(
            &mut rng,
            &[
                format!("Last month's cap was {last} EUR."),
                format!(
                    "Last month the cap was set at {last} EUR and nobody asked to revisit it then."
                ),
            ],
        ),
        pick(
            &mut rng,
            &[
                format!("{proposer} proposed {proposal} EUR."),
                format!("{proposer} proposed {proposal} EUR and would not go lower."),
            ],
        ),
        pick(
            &mut rng,
            &[
                format!("{counterer} countered with {counter} EUR, which the group turned down."),
                format!(
                    "{counterer} suggested {counter} EUR instead but the group does not take it up."
                ),
                format!("{counterer} put forward {counter} EUR but it finds no support."),
            ],
        ),
        decision,
    ];
    for i in (1..sentences.len()).rev() {
        sentences.swap(i, rng.random_range(0..=i));
    }
    format!(
        "{organizer} opens the meeting on next month's {dept} purchasing budget. {} Then they go round the table for purchase requests.",
        sentences.join(" ")
    )
}

/// Minutes after the meeting's end to record its decision.
const RECORD_MIN: u32 = 60;
const MAX_QTY: u32 = 3;
const MAX_UNIT: u32 = 600;
const MAX_TOTAL: u32 = 1000;

struct Request {
    name: String,
    item: String,
    quantity: u32,
    unit_price: u32,
    reasonable: bool,
}

/// The requests the speakers raise, one each: those at `unreasonable` break exactly
/// one family of procurement rule, chosen at random where possible.
fn draw_requests(
    rng: &mut tbsim_core::rng::StreamRng,
    speakers: &[&tbsim_scenario::Person],
    items: &[usize],
    unreasonable: &[usize],
) -> Vec<Request> {
    speakers
        .iter()
        .zip(items)
        .enumerate()
        .map(|(i, (person, item))| {
            let it = &corpus::CATALOGUE[*item];
            let bad = unreasonable.contains(&i);
            let (quantity, unit_price) = if !bad {
                let price = rng.random_range(it.min_price..=it.max_price);
                (
                    rng.random_range(1..=MAX_QTY.min(MAX_TOTAL / price).max(1)),
                    price,
                )
            } else {
                // Break exactly one family of rule, chosen at random where possible.
                let over_total_ok = it.max_price * MAX_QTY > MAX_TOTAL;
                match rng.random_range(0..if over_total_ok { 3 } else { 2 }) {
                    0 => (
                        rng.random_range(1..=2),
                        rng.random_range(MAX_UNIT + 50..=1000),
                    ),
                    1 => (
                        rng.random_range(MAX_QTY + 1..=MAX_QTY + 3),
                        rng.random_range(
                            it.min_price
                                ..=it
                                    .max_price
                                    .min(MAX_TOTAL / (MAX_QTY + 3))
                                    .max(it.min_price),
                        ),
                    ),
                    _ => {
                        let q = MAX_QTY;
                        let lo = (MAX_TOTAL / q + 1).max(it.min_price);
                        (q, rng.random_range(lo..=it.max_price))
                    }
                }
            };
            Request {
                name: person.name.clone(),
                item: it.name.to_owned(),
                quantity,
                unit_price,
                reasonable: !bad,
            }
        })
        .collect()
}

fn add_minutes(hm: &str, minutes: u32) -> String {
    let (h, m) = hm.split_once(':').unwrap_or(("9", "0"));
    let total = h.parse::<u32>().unwrap_or(9) * 60 + m.parse::<u32>().unwrap_or(0) + minutes;
    format!("{:02}:{:02}", total / 60, total % 60)
}

/// The variants: kind x level (level only matters where requests are filtered, but
/// it changes what is said in the meeting for every kind but `None`).
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for (name, kind) in [
        ("none", Kind::None),
        ("write", Kind::Write),
        ("sum", Kind::Sum),
        ("check", Kind::Check),
        ("check_sum", Kind::CheckSum),
    ] {
        for level in 1..=3u8 {
            v.push((
                format!("meeting_attend/{name}/l{level}"),
                Params {
                    kind: Some(kind),
                    level: Some(level),
                    ..Params::default()
                },
            ));
        }
    }
    v
}

/// Generates one instance (one or two tasks).
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("meeting");
    let summary = summary_path(ctx);
    let start = p
        .start
        .clone()
        .unwrap_or_else(|| ["09:00", "09:30", "10:00"][rng.random_range(0..3)].to_owned());
    let duration = p
        .duration_min
        .unwrap_or_else(|| [30, 60, 90, 120][rng.random_range(0..4)]);
    let kind = p.kind.unwrap_or_else(|| {
        [
            Kind::None,
            Kind::Write,
            Kind::Sum,
            Kind::Check,
            Kind::CheckSum,
        ][rng.random_range(0..5)]
    });
    let level = p.level.unwrap_or_else(|| rng.random_range(1..=3));
    if !["09:00", "09:30", "10:00"].contains(&start.as_str())
        || ![30, 60, 90, 120].contains(&duration)
        || !(1..=3).contains(&level)
    {
        return Err(format!(
            "meeting_attend parameters out of range: start {start} (09:00|09:30|10:00), duration {duration} (30|60|90|120), level {level} (1-3)"
        ));
    }
    if start.as_str() < ctx.start {
        return Err(format!(
            "the meeting at {start} starts before the working day ({})",
            ctx.start
        ));
    }
    let dept = ["Marketing", "Product"][rng.random_range(0..2)];
    let organizer = ctx
        .company
        .managers(dept)
        .first()
        .copied()
        .ok_or_else(|| format!("{dept} has no manager"))?;
    let staff = ctx.company.staff(dept);
    if staff.len() < 4 {
        return Err(format!(
            "{dept} has {} staff; meeting_attend needs 4 (raise company_size)",
            staff.len()
        ));
    }
    // Two requests at least stand the rules: with one, the grand total of the
    // `check_sum` kind was that request's total, often its unit price as said
    // (quantity one), which a probe picked by position (issue 37).
    let n_speakers = rng
        .random_range(4..=staff.len().min(5))
        .max(usize::from(level) + 2)
        .min(staff.len());
    let speakers: Vec<&tbsim_scenario::Person> = pick_distinct(&mut rng, staff.len(), n_speakers)
        .into_iter()
        .map(|i| staff[i])
        .collect();
    let unreasonable: Vec<usize> = if kind == Kind::None {
        Vec::new()
    } else {
        pick_distinct(&mut rng, speakers.len(), usize::from(level))
    };
    let items = pick_distinct(&mut rng, corpus::CATALOGUE.len(), speakers.len());
    let with_totals = matches!(kind, Kind::Sum | Kind::CheckSum);
    let filtered = matches!(kind, Kind::Check | Kind::CheckSum);
    // Where every request is to be listed, one of them is withdrawn later in the
    // meeting, so echoing every announced request never passes: without it, every
    // `write` and `sum` instance was solved by a script copying the list (issue 25).
    // Where rules filter, at least one request always breaks them (level >= 1).
    let withdrawn =
        (!filtered).then(|| ctx.rng("meeting/withdrawn").random_range(0..speakers.len()));
    let kept_of = |requests: &[Request]| -> Vec<usize> {
        (0..requests.len())
            .filter(|&i| {
                if filtered {
                    requests[i].reasonable
                } else {
                    Some(i) != withdrawn
                }
            })
            .collect()
    };
    // The grand total is drawn again while it equals a figure the brief or the
    // rules state (a unit price, a quantity, a limit): it was one of them in 16%
    // of `check_sum` instances, and a probe picked it by position (issue 37).
    let mut requests: Vec<Request> = Vec::new();
    for _ in 0..64 {
        requests = draw_requests(&mut rng, &speakers, &items, &unreasonable);
        let total: u32 = kept_of(&requests)
            .iter()
            .map(|&i| requests[i].quantity * requests[i].unit_price)
            .sum();
        let stated = requests
            .iter()
            .flat_map(|r| [r.quantity, r.unit_price])
            .chain([MAX_QTY, MAX_UNIT, MAX_TOTAL]);
        if !with_totals || !stated.into_iter().any(|v| v == total) {
            break;
        }
    }
    debug_assert!(requests.iter().all(|r| r.reasonable
        == (r.quantity <= MAX_QTY
            && r.unit_price <= MAX_UNIT
            && r.quantity * r.unit_price <= MAX_TOTAL)));

    let cap = draw_cap(ctx);
    let need = speakers.len() as u32 + 2;
    let rooms: Vec<_> = ctx.rooms.iter().filter(|r| r.capacity >= need).collect();
    let room = rooms[rng.random_range(0..rooms.len())];
    let end = add_minutes(&start, duration);
    let meeting_key = format!("meeting/{}-sync", ctx.id);
    let mut attendees: Vec<String> = speakers.iter().map(|p| p.key.clone()).collect();
    attendees.push(super::company::INTERN_KEY.into());
    let meeting = MeetingSpec {
        key: meeting_key.clone(),
        title: format!("{dept} purchasing sync"),
        room: room.key.clone(),
        start: ctx.at(&start),
        end: ctx.at(&end),
        organizer: organizer.key.clone(),
        attendees,
        agenda: "Team purchase requests for next month.".into(),
        announce_after_min: 5,
        early_tolerance_min: 5,
        late_tolerance_min: 5,
        // Said only in the meeting: the join result and the announcement carry it,
        // the calendar does not.
        notes: budget_notes(ctx, &organizer.name, dept, cap, &speakers),
    };

    let attend_key = ctx.task_key();
    let mut join = step("join_meeting", json!({"meeting": meeting_key}));
    join.gate = Gate::NotBefore(ctx.at(&start));
    let decision = decision_path(ctx);
    let record_by = add_minutes(&end, RECORD_MIN).min(ctx.deadline.to_owned());
    let cap_check = Check::JsonNumber {
        path: decision.clone(),
        pointer: "/budget_cap".into(),
        expected: f64::from(cap),
        tolerance: 0.5,
    };
    let attend_plan = vec![
        join,
        step(
            "write_file",
            json!({"path": decision, "content": json!({"budget_cap": cap}).to_string()}),
        ),
    ];
    let kind_name = match kind {
        Kind::None => "none",
        Kind::Write => "write",
        Kind::Sum => "sum",
        Kind::Check => "check",
        Kind::CheckSum => "check_sum",
    };
    let attend = ctx
        .task_spec::<super::meta_task::MeetingAttend>(format!("meeting_attend/{kind_name}/l{level}"))
        .key(attend_key.clone())
        .title(format!("Attend the {dept} purchasing sync"))
        .objective(format!(
            "{} invited you to the {dept} purchasing sync in the {} from {start} to {end}. Attend it: join on time (the room opens 5 minutes before the start; more than 5 minutes late is late). The meeting sets next month's purchasing budget cap: afterwards, record the cap it set in `{decision}` as {{\"budget_cap\": <number>}}. Work may also be handed out in the meeting.",
            organizer.name, room.name
        ))
        .assigned_by(organizer.key.clone())
        .release(ctx.day_start())
        // An hour past the meeting (or the task's own deadline, if sooner) to record
        // the decision.
        .deadline(ctx.at(&record_by))
        .checkpoints(vec![
            // An event, so tasks gated on attendance open the moment the intern
            // joins (the bundled suites gate on it).
            CheckpointSpec {
                key: "attended_on_time".into(),
                description: "Joined the meeting between 5 minutes before and 5 minutes after its start".into(),
                weight: 1,
                check: Check::Attended(meeting_key.clone()),
                feedback: "You did not join the meeting on time. Meetings notify you when they start; join within 5 minutes of the start (wait until then if you are early).".into(),
            },
            // What was decided, known only to those who were there (a late joiner
            // still reads it in the join result). It carries the task: joining every
            // meeting blindly earns the attendance point alone, a fifty-first of it.
            CheckpointSpec {
                key: "decision_recorded".into(),
                description: format!("`budget_cap` in `{decision}` is the cap the meeting set"),
                weight: 50,
                check: cap_check,
                feedback: format!("The budget cap is missing or wrong. The meeting decides it as a change to a figure said there (last month's cap raised or lowered, a colleague's proposal trimmed): join on time to hear it, work out the cap from what the decision says, and write it to `{decision}` as {{\"budget_cap\": <number>}}."),
            },
        ])
        .hints(vec![
            "Check your calendar for the meeting's time and key.".into(),
            "A notification arrives when the meeting starts; join_meeting right away.".into(),
            format!("Use wait until {start}, then join_meeting `{meeting_key}`; the join result's notes say how the cap was decided: start from the figure the decision names and apply its change."),
        ])
        .plan(attend_plan, 0)
        .build();
    let mut parts = Parts {
        tasks: vec![attend],
        files: Vec::new(),
        meetings: vec![meeting],
        clues: Vec::new(),
        ..Default::default()
    };
    if ctx.at(ctx.deadline) <= ctx.at(&end) {
        return Err(format!(
            "the deadline {} must be after the meeting ends ({end})",
            ctx.deadline
        ));
    }
    if kind == Kind::None {
        return Ok(parts);
    }

    let spoken: Vec<String> = requests
        .iter()
        .map(|r| {
            format!(
                "- {}: {} x {} at {} each",
                r.name, r.quantity, r.item, r.unit_price
            )
        })
        .collect();
    let kept: Vec<&Request> = kept_of(&requests)
        .into_iter()
        .map(|i| &requests[i])
        .collect();
    // Later remarks name the withdrawn request and one or two that stand, in drawn
    // order and wording (negation words on both sides), so that dropping the
    // requests named again, or those named with "no", is no rule for the answer,
    // and a random pick among the remarks is right one time in two or three
    // (issue 37): what each remark says decides.
    let withdrawal = withdrawn
        .map(|i| {
            let mut later = ctx.rng("meeting/later");
            let (name, item) = (&requests[i].name, &requests[i].item);
            let mut remarks = vec![
                [
                    format!("{name} withdrew their {item} request."),
                    format!("{name} dropped their {item} request."),
                    format!("{name} said they no longer need the {item}."),
                    format!("{name} said they don't need the {item} after all."),
                ][later.random_range(0..4)]
                .clone(),
            ];
            let others: Vec<usize> = (0..requests.len()).filter(|j| *j != i).collect();
            let n = later.random_range(2..=3).min(others.len());
            for j in pick_distinct(&mut later, others.len(), n) {
                let (name, item) = (&requests[others[j]].name, &requests[others[j]].item);
                remarks.push(
                    [
                        format!("{name} confirmed their {item} request."),
                        format!("{name} said the {item} request is not negotiable."),
                        format!("{name} said the {item} can't wait."),
                        format!("{name} repeated that they need the {item}."),
                    ][later.random_range(0..4)]
                    .clone(),
                );
            }
            for k in (1..remarks.len()).rev() {
                remarks.swap(k, later.random_range(0..=k));
            }
            remarks
                .iter()
                .map(|r| format!("\nLater in the meeting, {r}"))
                .collect::<String>()
        })
        .unwrap_or_default();
    let total: u32 = kept.iter().map(|r| r.quantity * r.unit_price).sum();
    let record = |r: &Request| -> serde_json::Value {
        let mut v = json!({"name": r.name, "item": r.item, "quantity": r.quantity, "unit_price": r.unit_price});
        if with_totals {
            v["total"] = json!(r.quantity * r.unit_price);
        }
        v
    };
    let mut answer = json!({"requests": kept.iter().map(|r| record(r)).collect::<Vec<_>>()});
    if with_totals {
        answer["statistics"] = json!({"total_cost": total});
    }
    let shape = if with_totals {
        "{\"requests\": [{\"name\": ..., \"item\": ..., \"quantity\": ..., \"unit_price\": ..., \"total\": ...}], \"statistics\": {\"total_cost\": ...}}"
    } else {
        "{\"requests\": [{\"name\": ..., \"item\": ..., \"quantity\": ..., \"unit_price\": ...}]}"
    };
    let filter_text = if filtered {
        format!(
            " Include only requests that follow the procurement rules in `{RULES}`; leave the others out."
        )
    } else {
        " Include every request still standing at the end of the meeting.".to_owned()
    };
    let summary_key = format!("task/{}-summary", ctx.id);
    let mut plan = Vec::new();
    if filtered {
        plan.push(step("read_file", json!({"path": RULES})));
    }
    plan.push(step("write_file", json!({"path": summary, "content": serde_json::to_string_pretty(&answer).unwrap_or_default()})));
    let mut checkpoints = vec![
        CheckpointSpec {
            key: "requests_match".into(),
            description: "The requests listed are exactly the ones asked for, with the right quantities and prices".into(),
            weight: 1,
            check: Check::JsonRecords {
                path: summary.clone(),
                pointer: "/requests".into(),
                expected: kept
                    .iter()
                    .map(|r| {
                        let mut rec = Record::default();
                        rec.text.insert("name".into(), r.name.clone());
                        rec.text.insert("item".into(), r.item.clone());
                        rec.numbers.insert("quantity".into(), f64::from(r.quantity));
                        rec.numbers.insert("unit_price".into(), f64::from(r.unit_price));
                        if with_totals {
                            rec.numbers.insert("total".into(), f64::from(r.quantity * r.unit_price));
                        }
                        rec
                    })
                    .collect(),
                tolerance: 0.5,
            },
            feedback: if filtered {
                format!("The request list is missing or does not match. Write `{summary}` as {shape}. Apply each procurement rule (quantity, unit price and total) to every request, keep only the reasonable ones, and copy names, items and numbers exactly as said in the meeting.")
            } else {
                format!("The request list is missing or does not match. Write `{summary}` as {shape}, recording every request raised in the meeting and not withdrawn, with names, items and numbers exactly as said.")
            },
        },
    ];
    if with_totals {
        checkpoints.push(CheckpointSpec {
            key: "total_correct".into(),
            description: "`statistics.total_cost` is the sum of the listed totals".into(),
            weight: 1,
            check: Check::JsonNumber { path: summary.clone(), pointer: "/statistics/total_cost".into(), expected: f64::from(total), tolerance: 0.5 },
            feedback: "The grand total is wrong or missing. Each total is quantity x unit price; `statistics.total_cost` adds the totals of the listed requests (use the calculator).".into(),
        });
    }
    if filtered {
        checkpoints.push(CheckpointSpec {
            key: "rules_consulted".into(),
            description: "Read the procurement rules".into(),
            weight: 1,
            check: Check::Consulted(RULES.into()),
            feedback: format!("The procurement rules were not read. They are at `{RULES}`."),
        });
        parts.files.push(FileSpec {
            path: RULES.into(),
            content: Content::Text(corpus::fill(
                corpus::PROCUREMENT_RULES,
                &[
                    ("company", corpus::COMPANY),
                    ("max_quantity", &MAX_QTY.to_string()),
                    ("max_unit_price", &MAX_UNIT.to_string()),
                    ("max_total", &MAX_TOTAL.to_string()),
                ],
            )),
        });
    }
    let summary = ctx
        .task_spec::<super::meta_task::MeetingAttend>(format!("meeting_attend/{kind_name}/l{level}"))
        .key(summary_key)
        .title("Summarise the purchase requests")
        .objective(format!(
            "In the {dept} purchasing sync, {} asked you to summarise the purchase requests raised:\n{}{withdrawal}\nWrite them to `{summary}` as {shape}.{filter_text}",
            organizer.name,
            spoken.join("\n")
        ))
        .assigned_by(organizer.key.clone())
        .release(Release::InMeeting(meeting_key))
        .checkpoints(checkpoints)
        .hints(vec![
            "Everything you need was said in the meeting announcement.".into(),
            if filtered {
                format!("Read `{RULES}` and test each request against every rule.")
            } else {
                "List every request that was not withdrawn; keep names and items exactly as said.".into()
            },
            if with_totals {
                "Compute each total as quantity x unit price and add the listed totals for `statistics.total_cost`.".into()
            } else {
                format!("Write valid JSON to `{summary}` with one object per request.")
            },
        ])
        .plan(plan, 0)
        .build();
    parts.tasks.push(summary);
    Ok(parts)
}

/// Wrong answers for tests. The attend task: a cap of 0, every number its brief
/// states, every figure the meeting's notes state (the cap is worked out, never
/// said), and the decision's change applied the wrong way (last month's cap moved
/// against the decision, the proposal raised instead of trimmed). A summary: every
/// request said in the meeting (some break the rules, or one was withdrawn), and
/// where totals count, every request with its unit price as its total.
pub fn wrong_answers(
    task: &TaskSpec,
    scenario: &tbsim_scenario::Scenario,
) -> Vec<(String, String)> {
    if let Some(path) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::JsonNumber { path, pointer, .. } if pointer == "/budget_cap" => Some(path.clone()),
        _ => None,
    }) {
        let mut caps: std::collections::BTreeSet<u64> = [0].into();
        let numbers = |text: &str| -> Vec<u64> {
            text.split(|c: char| !c.is_ascii_digit())
                .filter_map(|n| n.parse::<u64>().ok())
                .collect()
        };
        caps.extend(numbers(&format!("{} {}", task.title, task.objective)));
        for m in scenario
            .meetings
            .iter()
            .filter(|m| task.objective.contains(&format!("the {} in the ", m.title)))
        {
            caps.extend(numbers(&m.notes));
            // The decision's sentence names the step ("by N EUR") and, for a
            // proposal, whose; its figure moved the other way is a misreading.
            for sentence in m.notes.split(". ") {
                let Some(step) = sentence
                    .split_once(" by ")
                    .and_then(|(_, rest)| numbers(rest).first().copied())
                else {
                    continue;
                };
                let base = if sentence.contains("last month's cap") {
                    m.notes
                        .split(". ")
                        .find(|t| t.trim_start().starts_with("Last month"))
                        .and_then(|t| numbers(t).first().copied())
                } else {
                    sentence.split("'s proposal").next().and_then(|who| {
                        let who = who
                            .trim()
                            .trim_start_matches("Decision: next month's cap is ")
                            .trim_start_matches("They take ");
                        m.notes
                            .split(". ")
                            .find(|t| t.contains(&format!("{who} proposed ")))
                            .and_then(|t| numbers(t).first().copied())
                    })
                };
                if let Some(base) = base {
                    caps.extend([base + step, base.saturating_sub(step)]);
                }
            }
        }
        // Both directions were added: the right one is not a wrong answer.
        if let Some(right) = task.checkpoints.iter().find_map(|c| match &c.check {
            Check::JsonNumber {
                pointer, expected, ..
            } if pointer == "/budget_cap" => Some(*expected as u64),
            _ => None,
        }) {
            caps.remove(&right);
        }
        return caps
            .into_iter()
            .map(|cap| (path.clone(), json!({"budget_cap": cap}).to_string()))
            .collect();
    }
    let filtered = task.checkpoints.iter().any(|c| c.key == "rules_consulted");
    let Some(path) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::JsonRecords { path, .. } => Some(path.clone()),
        _ => None,
    }) else {
        return Vec::new();
    };
    // Requests are announced as "- Name: Q x Item at P each".
    let all: Vec<serde_json::Value> = task
        .objective
        .lines()
        .filter_map(|l| {
            let (name, rest) = l.strip_prefix("- ")?.split_once(": ")?;
            let (q, rest) = rest.split_once(" x ")?;
            let (item, p) = rest.rsplit_once(" at ")?;
            let (q, p): (u32, u32) = (q.parse().ok()?, p.strip_suffix(" each")?.parse().ok()?);
            Some(
                json!({"name": name, "item": item, "quantity": q, "unit_price": p, "total": q * p}),
            )
        })
        .collect();
    let answer = |requests: &[serde_json::Value]| {
        let total: u64 = requests.iter().filter_map(|r| r["total"].as_u64()).sum();
        (
            path.clone(),
            json!({"requests": requests, "statistics": {"total_cost": total}}).to_string(),
        )
    };
    // Every announced request: some break the rules, or one was withdrawn.
    let mut out = vec![answer(&all)];
    if filtered {
        return out;
    }
    let unit_totals: Vec<serde_json::Value> = all
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r["total"] = r["unit_price"].clone();
            r
        })
        .collect();
    // Only where totals are graded (otherwise the records carry no total).
    let with_totals = task.checkpoints.iter().any(|c| c.key == "total_correct");
    if with_totals && all.iter().any(|r| r["quantity"] != 1) {
        out.push(answer(&unit_totals));
    }
    out
}
