//! Data completion: fill the gaps of one column from the relations between columns.
//!
//! A table on the drive (one of twelve kinds across six domains) has blank cells in
//! exactly one column; the data-completion handbook states every relation (sums,
//! rates, quarter-on-quarter change, straight-line depreciation, interpolation,
//! rolling means, funnels). Two kinds need reference data held by another team:
//! fee rates (Finance) and carrier service levels (Sales), whose location only
//! those teams' members disclose. The difficulty presets set the share of blank
//! rows, the length of blank runs and the table size. The agent saves the
//! completed table; it is compared cell by cell with the true table
//! ([`Check::CsvTable`]).
//!
//! Differences from the reference: every value, entity, rate, speed and the target
//! column are drawn from the task's seed (the reference had 60 fixed datasets);
//! every instance is solvable by construction: interpolation targets have recorded
//! days on both sides and their truth *is* the interpolation (the reference graded
//! against hidden noise), each entity keeps a known quarter when totals are
//! missing, and values are generated so that inverting a relation is exact (whole
//! amounts with whole-percent fee rates, distances that are whole quarter-hours of
//! travel, click-through rates that divide impressions exactly, depreciation in
//! whole cents), so no tolerance is ever at the mercy of rounding; tolerances
//! follow each column's precision instead of a flat 0.1; the resource checkpoint
//! requires reading the rates or SLA table the NPC points to (not a keyword in a
//! chat, which the agent could type itself), and there is no free checkpoint for
//! kinds that need no resource; the early-return scoring inconsistency is gone.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, pick_distinct, step};
use tbsim_core::rng::StreamRng;
use tbsim_scenario::date::Date;
use tbsim_scenario::{
    Check, CheckpointSpec, Clue, Condition, Content, FileSpec, Gate, Scenario, TaskSpec,
};

/// The six domains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DataDomain {
    /// Sales figures.
    Sales,
    /// Transactions.
    Transactions,
    /// Inventory.
    Inventory,
    /// Finance.
    Finance,
    /// Logistics.
    Logistics,
    /// Web analytics.
    Web,
}

impl DataDomain {
    const ALL: [DataDomain; 6] = [
        DataDomain::Sales,
        DataDomain::Transactions,
        DataDomain::Inventory,
        DataDomain::Finance,
        DataDomain::Logistics,
        DataDomain::Web,
    ];
    /// The reference's name.
    pub fn name(self) -> &'static str {
        match self {
            DataDomain::Sales => "sales",
            DataDomain::Transactions => "transactions",
            DataDomain::Inventory => "inventory",
            DataDomain::Finance => "finance",
            DataDomain::Logistics => "logistics",
            DataDomain::Web => "web",
        }
    }
    fn types(self) -> [TaskType; 2] {
        match self {
            DataDomain::Sales => [TaskType::QuarterFromMonths, TaskType::QoqRate],
            DataDomain::Transactions => [TaskType::TaxFee, TaskType::TotalFromItems],
            DataDomain::Inventory => [TaskType::EndingFromFlow, TaskType::DailyInterpolation],
            DataDomain::Finance => [
                TaskType::AccountBalanceFromDetails,
                TaskType::DepreciationStraightLine,
            ],
            DataDomain::Logistics => [TaskType::EtaDistanceSla, TaskType::SegmentTimeSum],
            DataDomain::Web => [TaskType::RollingAvg, TaskType::Funnel],
        }
    }
}

/// The twelve kinds of table (two per domain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskType {
    /// `quarter_total = m1 + m2 + m3`.
    QuarterFromMonths,
    /// Quarter-on-quarter change.
    QoqRate,
    /// `fee = amount x rate(category)`; rates from Finance.
    TaxFee,
    /// `total = item_a + item_b + item_c`.
    TotalFromItems,
    /// `ending = begin + inbound - outbound - shrinkage`.
    EndingFromFlow,
    /// Linear interpolation of a daily series.
    DailyInterpolation,
    /// `balance = detail1 + detail2 + detail3`.
    AccountBalanceFromDetails,
    /// `cost = monthly_dep x life_months + salvage`.
    DepreciationStraightLine,
    /// `eta = distance / speed + handling`; SLAs from Sales.
    EtaDistanceSla,
    /// `total_time = seg1 + seg2 + seg3`.
    SegmentTimeSum,
    /// Trailing 7-day mean.
    RollingAvg,
    /// `clicks = impressions x ctr`.
    Funnel,
}

impl TaskType {
    /// The reference's name.
    pub fn name(self) -> &'static str {
        match self {
            TaskType::QuarterFromMonths => "quarter_from_months",
            TaskType::QoqRate => "qoq_rate",
            TaskType::TaxFee => "tax_fee",
            TaskType::TotalFromItems => "total_from_items",
            TaskType::EndingFromFlow => "ending_from_flow",
            TaskType::DailyInterpolation => "daily_interpolation",
            TaskType::AccountBalanceFromDetails => "account_balance_from_details",
            TaskType::DepreciationStraightLine => "depreciation_straight_line",
            TaskType::EtaDistanceSla => "eta_distance_sla",
            TaskType::SegmentTimeSum => "segment_time_sum",
            TaskType::RollingAvg => "rolling_avg",
            TaskType::Funnel => "funnel",
        }
    }
    /// The domain it belongs to.
    pub fn domain(self) -> DataDomain {
        DataDomain::ALL
            .into_iter()
            .find(|d| d.types().contains(&self))
            .unwrap_or(DataDomain::Sales)
    }
    fn file(self) -> &'static str {
        match self {
            TaskType::QuarterFromMonths => "sales_quarter_from_months",
            TaskType::QoqRate => "sales_qoq",
            TaskType::TaxFee => "transactions_tax_fee",
            TaskType::TotalFromItems => "transactions_total_from_items",
            TaskType::EndingFromFlow => "inventory_ending_from_flow",
            TaskType::DailyInterpolation => "inventory_daily_interpolation",
            TaskType::AccountBalanceFromDetails => "finance_account_balance",
            TaskType::DepreciationStraightLine => "finance_depreciation",
            TaskType::EtaDistanceSla => "logistics_eta",
            TaskType::SegmentTimeSum => "logistics_segment_sum",
            TaskType::RollingAvg => "web_rolling",
            TaskType::Funnel => "web_funnel",
        }
    }
}

/// Difficulty presets: (missing rate, blank run length, rows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// 5% missing, single cells, 30 rows.
    VeryEasy,
    /// 8%, runs of 1, 50 rows.
    Easy,
    /// 15%, runs of 3, 80 rows.
    Medium,
    /// 25%, runs of 5, 120 rows.
    Hard,
    /// 35%, runs of 7, 200 rows.
    VeryHard,
}

impl Level {
    const ALL: [Level; 5] = [
        Level::VeryEasy,
        Level::Easy,
        Level::Medium,
        Level::Hard,
        Level::VeryHard,
    ];
    fn name(self) -> &'static str {
        match self {
            Level::VeryEasy => "very_easy",
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::VeryHard => "very_hard",
        }
    }
    fn preset(self) -> (f64, usize, usize) {
        match self {
            Level::VeryEasy => (0.05, 0, 30),
            Level::Easy => (0.08, 1, 50),
            Level::Medium => (0.15, 3, 80),
            Level::Hard => (0.25, 5, 120),
            Level::VeryHard => (0.35, 7, 200),
        }
    }
}

/// Parameters; unset ones are drawn uniformly from the reference's space.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Domain (implied by `task_type` when only that is set).
    #[serde(default)]
    pub domain: Option<DataDomain>,
    /// Kind of table; must belong to `domain`.
    #[serde(default)]
    pub task_type: Option<TaskType>,
    /// Difficulty preset.
    #[serde(default)]
    pub difficulty: Option<Level>,
    /// Table size, overriding the preset (12-400).
    #[serde(default)]
    pub rows: Option<usize>,
}

/// The variants: domain-type x difficulty (reference §4.12).
pub fn variants() -> Vec<(String, Params)> {
    let mut v = Vec::new();
    for d in DataDomain::ALL {
        for t in d.types() {
            for l in Level::ALL {
                v.push((
                    format!("data_completion/{}/{}/{}", d.name(), t.name(), l.name()),
                    Params {
                        domain: Some(d),
                        task_type: Some(t),
                        difficulty: Some(l),
                        rows: None,
                    },
                ));
            }
        }
    }
    v
}

/// Reference data held by another team.
struct Resource {
    dept: &'static str,
    file: &'static str,
    csv: String,
    trigger: Vec<Vec<String>>,
    question: &'static str,
    what: &'static str,
}

/// A complete table before blanking.
struct Table {
    header: Vec<&'static str>,
    rows: Vec<Vec<String>>,
    /// Columns that may be the target, with the tolerance for each.
    targets: Vec<(&'static str, f64)>,
    /// Rows whose target cell may be blanked, per target column (default: all).
    never_blank: fn(&Table, &str, usize) -> bool,
    /// For each row, the entity that must keep at least one known target cell
    /// when the target is listed (quarter totals).
    keep_one: Option<(&'static str, Vec<usize>)>,
    resource: Option<Resource>,
}

fn no_rule(_: &Table, _: &str, _: usize) -> bool {
    false
}

fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100)
}

/// `n` distinct codes `PREFIX-0042` numbered 1..=space, in draw order (rejection
/// sampling: the spaces are large and `n` small).
fn distinct_codes(rng: &mut StreamRng, prefix: &str, n: usize, space: usize) -> Vec<String> {
    let width = space.to_string().len();
    let mut seen = BTreeSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n.min(space) {
        let i = rng.random_range(1..=space);
        if seen.insert(i) {
            out.push(format!("{prefix}-{i:0width$}"));
        }
    }
    out
}

/// `today` plus `days` (may be negative).
fn shift_date(today: Date, days: i64) -> Date {
    today
        .add_days(days)
        .expect("a scenario's date is decades inside the supported years")
}

fn ymd(d: Date) -> String {
    d.to_string()
}

fn parse_date(date: &str) -> Result<Date, String> {
    Date::parse(date).ok_or_else(|| format!("bad date `{date}`"))
}

const CARRIERS: &[&str] = &[
    "Northline Freight",
    "Kestrel Express",
    "Bluewater Haulage",
    "Meridian Parcel",
    "Ironbridge Logistics",
    "Swiftmoor Couriers",
    "Copperfield Transport",
    "Larchway Cargo",
];
const FEE_CATEGORIES: &[&str] = &["domestic", "cross_border", "card", "wire", "marketplace"];

/// Builds the complete table for a kind of dataset with `n` rows (about).
fn build(t: TaskType, rng: &mut StreamRng, n: usize, today: Date) -> Result<Table, String> {
    let mut table = Table {
        header: Vec::new(),
        rows: Vec::new(),
        targets: Vec::new(),
        never_blank: no_rule,
        keep_one: None,
        resource: None,
    };
    let year = today.year() - 1;
    match t {
        TaskType::QuarterFromMonths => {
            table.header = vec!["entity", "quarter", "m1", "m2", "m3", "quarter_total"];
            let entities = distinct_codes(rng, "BR", (n / 4).max(2), 999);
            for e in &entities {
                for q in 1..=4 {
                    let m: Vec<u32> = (0..3).map(|_| rng.random_range(1000..=10_000)).collect();
                    table.rows.push(vec![
                        e.clone(),
                        format!("{year}-Q{q}"),
                        m[0].to_string(),
                        m[1].to_string(),
                        m[2].to_string(),
                        (m[0] + m[1] + m[2]).to_string(),
                    ]);
                }
            }
            table.targets = ["m1", "m2", "m3", "quarter_total"]
                .into_iter()
                .map(|c| (c, 0.5))
                .collect();
        }
        TaskType::QoqRate => {
            table.header = vec!["entity", "quarter", "quarter_total", "qoq"];
            let entities = distinct_codes(rng, "BR", (n / 4).max(2), 999);
            let mut groups = Vec::new();
            for (i, e) in entities.iter().enumerate() {
                let mut prev: Option<i64> = None;
                for q in 1..=4 {
                    let total = match prev {
                        None => rng.random_range(8_000..=20_000i64),
                        Some(p) => {
                            let change = rng.random_range(-0.15..0.25);
                            ((p as f64) * (1.0 + change)).round().max(1.0) as i64
                        }
                    };
                    let qoq = prev.map_or(String::new(), |p| {
                        format!("{:.6}", (total - p) as f64 / p as f64)
                    });
                    table.rows.push(vec![
                        e.clone(),
                        format!("{year}-Q{q}"),
                        total.to_string(),
                        qoq,
                    ]);
                    groups.push(i);
                    prev = Some(total);
                }
            }
            table.targets = vec![("qoq", 0.0001), ("quarter_total", 0.5)];
            // The first quarter's qoq is blank by definition, never a gap.
            table.never_blank = |t, col, r| col == "qoq" && t.rows[r][1].ends_with("-Q1");
            table.keep_one = Some(("quarter_total", groups));
        }
        TaskType::TaxFee => {
            table.header = vec!["entity", "date", "category", "amount", "fee"];
            let cats: Vec<&str> = pick_distinct(rng, FEE_CATEGORIES.len(), 3)
                .into_iter()
                .map(|i| FEE_CATEGORIES[i])
                .collect();
            let pcts: Vec<u32> = pick_distinct(rng, 11, 3)
                .into_iter()
                .map(|i| [2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 15][i])
                .collect();
            let accounts = distinct_codes(rng, "AC", 8, 9999);
            let mut dated: Vec<(String, Vec<String>)> = (0..n)
                .map(|_| {
                    let c = rng.random_range(0..3);
                    // Whole amounts and whole-percent rates: fees are exact cents,
                    // so an amount can be recovered exactly from its fee.
                    let amount: i64 = rng.random_range(50..=5_000);
                    let date = ymd(shift_date(today, -rng.random_range(1..=60i64)));
                    (
                        date.clone(),
                        vec![
                            accounts[rng.random_range(0..accounts.len())].clone(),
                            date,
                            cats[c].to_owned(),
                            amount.to_string(),
                            money(amount * i64::from(pcts[c])),
                        ],
                    )
                })
                .collect();
            dated.sort_by(|a, b| a.0.cmp(&b.0));
            table.rows = dated.into_iter().map(|(_, r)| r).collect();
            table.targets = vec![("amount", 0.01), ("fee", 0.01)];
            let mut csv = String::from("category,fee_rate,applies_to\n");
            for (c, p) in cats.iter().zip(&pcts) {
                let _ = writeln!(
                    csv,
                    "{c},{:.2},{}",
                    f64::from(*p) / 100.0,
                    match *c {
                        "domestic" => "payments within the country",
                        "cross_border" => "payments to or from abroad",
                        "card" => "card settlements",
                        "wire" => "same-day wire transfers",
                        _ => "marketplace payouts",
                    }
                );
            }
            table.resource = Some(Resource {
                dept: "Finance",
                file: "fee_rates.csv",
                csv,
                trigger: vec![
                    vec![
                        "fee".into(),
                        "tax".into(),
                        "charge".into(),
                        "commission".into(),
                    ],
                    [
                        "rate",
                        "percentage",
                        "percent",
                        "category",
                        "table",
                        "how much",
                        "amount",
                        "value",
                        "where",
                        "list",
                        "schedule",
                        "reference",
                        "file",
                    ]
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                ],
                question: "I'm completing missing values in a fee dataset. Which fee rate applies to each category?",
                what: "The fee rates per category",
            });
        }
        TaskType::TotalFromItems => {
            table.header = vec!["entity", "date", "item_a", "item_b", "item_c", "total"];
            let ids = distinct_codes(rng, "ORD", n, 99_999);
            let mut rows: Vec<Vec<String>> = ids
                .into_iter()
                .map(|id| {
                    let items: Vec<i64> = (0..3).map(|_| rng.random_range(500..=80_000)).collect();
                    vec![
                        id,
                        ymd(shift_date(today, -rng.random_range(1..=45i64))),
                        money(items[0]),
                        money(items[1]),
                        money(items[2]),
                        money(items.iter().sum()),
                    ]
                })
                .collect();
            rows.sort_by(|a, b| (&a[1], &a[0]).cmp(&(&b[1], &b[0])));
            table.rows = rows;
            table.targets = ["item_a", "item_b", "item_c", "total"]
                .into_iter()
                .map(|c| (c, 0.01))
                .collect();
        }
        TaskType::EndingFromFlow => {
            table.header = vec![
                "entity",
                "day",
                "begin",
                "inbound",
                "outbound",
                "shrinkage",
                "ending",
            ];
            let days = 10usize;
            let skus = distinct_codes(rng, "SKU", (n / days).max(3), 99_999);
            for sku in &skus {
                let mut begin: i64 = rng.random_range(100..=500);
                for d in 0..days {
                    let inbound: i64 = rng.random_range(1..=120);
                    let shrink: i64 = rng.random_range(1..=6);
                    let outbound: i64 =
                        rng.random_range(1..=(begin + inbound - shrink).clamp(1, 150));
                    let ending = begin + inbound - outbound - shrink;
                    table.rows.push(vec![
                        sku.clone(),
                        ymd(shift_date(today, d as i64 - days as i64)),
                        begin.to_string(),
                        inbound.to_string(),
                        outbound.to_string(),
                        shrink.to_string(),
                        ending.to_string(),
                    ]);
                    begin = ending;
                }
            }
            // Shrinkage (1-6 units) is never the gap: a handful of small numbers
            // written in turn found it (issue 37).
            table.targets = ["begin", "inbound", "outbound", "ending"]
                .into_iter()
                .map(|c| (c, 0.5))
                .collect();
        }
        TaskType::DailyInterpolation => {
            table.header = vec!["day", "stock_level"];
            let base = rng.random_range(150..=400i64);
            let trend = rng.random_range(-2.0..2.0);
            for i in 0..n {
                let v = base as f64 + trend * i as f64 + rng.random_range(-10.0..10.0);
                table.rows.push(vec![
                    ymd(shift_date(today, i as i64 - n as i64)),
                    (v.round().max(0.0) as i64).to_string(),
                ]);
            }
            table.targets = vec![("stock_level", 0.01)];
            // Interpolation needs a recorded day on both sides.
            table.never_blank = |t, _, r| r == 0 || r + 1 == t.rows.len();
        }
        TaskType::AccountBalanceFromDetails => {
            table.header = vec!["entity", "detail1", "detail2", "detail3", "balance"];
            let ids = distinct_codes(rng, "GL", n, 9_999);
            let mut ids = ids;
            ids.sort();
            for id in ids {
                let d: Vec<i64> = (0..3)
                    .map(|_| {
                        let v = rng.random_range(100..=800_000);
                        if rng.random_bool(0.15) { -v } else { v }
                    })
                    .collect();
                table.rows.push(vec![
                    id,
                    money(d[0]),
                    money(d[1]),
                    money(d[2]),
                    money(d.iter().sum()),
                ]);
            }
            table.targets = ["detail1", "detail2", "detail3", "balance"]
                .into_iter()
                .map(|c| (c, 0.01))
                .collect();
        }
        TaskType::DepreciationStraightLine => {
            table.header = vec!["entity", "cost", "salvage", "life_months", "monthly_dep"];
            let mut ids = distinct_codes(rng, "FA", n, 9_999);
            ids.sort();
            for id in ids {
                let life: i64 = [12, 24, 36, 48, 60][rng.random_range(0..5)];
                let monthly: i64 = rng.random_range(2_000..=150_000);
                let salvage: i64 = rng.random_range(5_000..=500_000);
                table.rows.push(vec![
                    id,
                    money(monthly * life + salvage),
                    money(salvage),
                    life.to_string(),
                    money(monthly),
                ]);
            }
            // The life is one of five round counts: never the gap (issue 37).
            table.targets = vec![("cost", 0.01), ("salvage", 0.01), ("monthly_dep", 0.01)];
        }
        TaskType::EtaDistanceSla => {
            table.header = vec!["shipment", "distance_km", "carrier", "eta_hours"];
            let carriers: Vec<&str> = pick_distinct(rng, CARRIERS.len(), 3)
                .into_iter()
                .map(|i| CARRIERS[i])
                .collect();
            // Speeds in steps of 5 km/h and travel in whole quarter-hours make
            // distances exact to the cent and ETAs exact to two decimals.
            let speeds: Vec<i64> = (0..3)
                .map(|_| 40 + 5 * rng.random_range(0..=8i64))
                .collect();
            let handling: Vec<i64> = (0..3)
                .map(|_| [50, 75, 100, 125, 150, 200][rng.random_range(0..6)])
                .collect();
            let mut ids = distinct_codes(rng, "SHP", n, 999_999);
            ids.sort();
            for id in ids {
                let c = rng.random_range(0..3);
                let quarters: i64 = rng.random_range(4..=64);
                // distance = quarters/4 h x speed km/h, in hundredths of a km.
                let distance = quarters * speeds[c] * 25;
                let eta = quarters * 25 + handling[c];
                table.rows.push(vec![
                    id,
                    money(distance),
                    carriers[c].to_owned(),
                    money(eta),
                ]);
            }
            table.targets = vec![("eta_hours", 0.01), ("distance_km", 0.05)];
            let mut csv = String::from("carrier,avg_speed_kmh,handling_hours\n");
            for i in 0..3 {
                let _ = writeln!(csv, "{},{},{}", carriers[i], speeds[i], money(handling[i]));
            }
            table.resource = Some(Resource {
                dept: "Sales",
                file: "carrier_sla.csv",
                csv,
                trigger: vec![
                    [
                        "carrier",
                        "shipment",
                        "delivery",
                        "eta",
                        "logistics",
                        "shipping",
                        "courier",
                        "freight",
                        "transit",
                    ]
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                    [
                        "sla",
                        "speed",
                        "handling",
                        "service level",
                        "velocity",
                        "km",
                        "kmh",
                        "average",
                        "per hour",
                        "how fast",
                        "processing",
                        "turnaround",
                        "rate",
                        "performance",
                        "benchmark",
                    ]
                    .iter()
                    .map(|s| (*s).to_owned())
                    .collect(),
                ],
                question: "I'm filling in missing ETA values in a shipments table. What are the carriers' SLA speeds and handling times?",
                what: "The carrier service levels (average speed and handling time)",
            });
        }
        TaskType::SegmentTimeSum => {
            table.header = vec!["job", "seg1", "seg2", "seg3", "total_time"];
            let mut ids = distinct_codes(rng, "JOB", n, 99_999);
            ids.sort();
            for id in ids {
                let s: Vec<i64> = (0..3).map(|_| rng.random_range(25..=1_200)).collect();
                table.rows.push(vec![
                    id,
                    money(s[0]),
                    money(s[1]),
                    money(s[2]),
                    money(s.iter().sum()),
                ]);
            }
            table.targets = ["seg1", "seg2", "seg3", "total_time"]
                .into_iter()
                .map(|c| (c, 0.01))
                .collect();
        }
        TaskType::RollingAvg => {
            table.header = vec!["day", "metric", "rolling_7d"];
            let base = rng.random_range(800..=4_000i64);
            let weekly: Vec<i64> = (0..7).map(|_| rng.random_range(-300..=300)).collect();
            let metrics: Vec<i64> = (0..n)
                .map(|i| (base + weekly[i % 7] + rng.random_range(-150..=150)).max(1))
                .collect();
            for i in 0..n {
                let from = i.saturating_sub(6);
                let window = &metrics[from..=i];
                let mean = window.iter().sum::<i64>() as f64 / window.len() as f64;
                table.rows.push(vec![
                    ymd(shift_date(today, i as i64 - n as i64)),
                    metrics[i].to_string(),
                    format!("{mean:.4}"),
                ]);
            }
            table.targets = vec![("rolling_7d", 0.001)];
        }
        TaskType::Funnel => {
            table.header = vec!["entity", "impressions", "ctr", "clicks"];
            let mut ids = distinct_codes(rng, "CMP", n, 9_999);
            ids.sort();
            for id in ids {
                // ctr in basis points; impressions a multiple of what makes the
                // clicks whole, so every column can be recovered exactly.
                let bp: i64 = rng.random_range(50..=900);
                let unit = 10_000 / gcd(bp, 10_000);
                let lo = (5_000 + unit - 1) / unit;
                let hi = (500_000 / unit).max(lo);
                let impressions = unit * rng.random_range(lo..=hi);
                let clicks = impressions * bp / 10_000;
                table.rows.push(vec![
                    id,
                    impressions.to_string(),
                    format!("{}.{:04}", bp / 10_000, bp % 10_000),
                    clicks.to_string(),
                ]);
            }
            table.targets = vec![("impressions", 0.5), ("ctr", 0.0001), ("clicks", 0.5)];
        }
    }
    if table.rows.is_empty() {
        return Err("data_completion: empty table".into());
    }
    Ok(table)
}

fn gcd(a: i64, b: i64) -> i64 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

/// Picks the rows whose target cell is blanked: runs of `run` rows (1 when 0)
/// from random starts until at least `max(1, rows x rate)` are blank.
fn blank_rows(
    rng: &mut StreamRng,
    table: &Table,
    target: &str,
    rate: f64,
    run: usize,
) -> BTreeSet<usize> {
    let n = table.rows.len();
    let eligible: Vec<usize> = (0..n)
        .filter(|&r| !(table.never_blank)(table, target, r))
        .collect();
    let groups = table
        .keep_one
        .as_ref()
        .filter(|(col, _)| *col == target)
        .map(|(_, g)| g);
    // Each group keeps one known cell, so at most this many can be blank.
    let capacity = match groups {
        Some(g) => {
            let distinct: BTreeSet<&usize> = g.iter().collect();
            eligible.len().saturating_sub(distinct.len())
        }
        None => eligible.len(),
    };
    let want = ((n as f64 * rate).floor() as usize).max(1).min(capacity);
    let mut blank = BTreeSet::new();
    let run = run.max(1);
    while blank.len() < want {
        let start = eligible[rng.random_range(0..eligible.len())];
        for r in start..(start + run).min(n) {
            if blank.len() >= want && r > start {
                break;
            }
            if (table.never_blank)(table, target, r) || blank.contains(&r) {
                continue;
            }
            if let Some(g) = groups {
                let known = (0..n)
                    .filter(|&o| g[o] == g[r] && !blank.contains(&o))
                    .count();
                if known <= 1 {
                    continue;
                }
            }
            blank.insert(r);
        }
    }
    blank
}

/// For interpolation: when no two blank rows are adjacent, the row after (else
/// before) the first blank joins it. The truth of a lone gap is the mean of its two
/// neighbours, which a script that fills every blank with its neighbours' mean
/// writes without reading the task; across two missing days it is not.
fn widen_a_gap(table: &Table, target: &str, mut blank: BTreeSet<usize>) -> BTreeSet<usize> {
    let n = table.rows.len();
    if blank.iter().any(|r| blank.contains(&(r + 1))) {
        return blank;
    }
    let usable = |r: usize, blank: &BTreeSet<usize>| {
        r < n && !(table.never_blank)(table, target, r) && !blank.contains(&r)
    };
    let mut add = None;
    for &r in &blank {
        if usable(r + 1, &blank) {
            add = Some(r + 1);
            break;
        }
        if r > 0 && usable(r - 1, &blank) {
            add = Some(r - 1);
            break;
        }
    }
    if let Some(r) = add {
        blank.insert(r);
    }
    blank
}

/// Whether filling the blanks of column `col` top to bottom from the nearest
/// values above and below (zero, the one above, the one below, or their mean,
/// each fill seeing the ones before it), or with the mean of the column's known
/// values, lands within `tolerance` of `truth` on every blank, for any of those
/// rules.
fn blind_fill_passes(
    truth: &[Vec<String>],
    blank: &BTreeSet<usize>,
    col: usize,
    tolerance: f64,
) -> bool {
    let value = |r: usize| truth[r][col].parse::<f64>().ok();
    let known: Vec<f64> = (0..truth.len())
        .filter(|r| !blank.contains(r))
        .filter_map(value)
        .collect();
    let mean = known.iter().sum::<f64>() / known.len().max(1) as f64;
    if blank
        .iter()
        .all(|&r| value(r).is_some_and(|t| (mean - t).abs() <= tolerance + 1e-9))
    {
        return true;
    }
    type Fill = fn(Option<f64>, Option<f64>) -> Option<f64>;
    let fills: [Fill; 4] = [
        |_, _| Some(0.0),
        |p, _| p,
        |_, n| n,
        |p, n| Some((p? + n?) / 2.0),
    ];
    fills.iter().any(|fill| {
        let mut got: Vec<Option<f64>> = (0..truth.len())
            .map(|r| if blank.contains(&r) { None } else { value(r) })
            .collect();
        for &r in blank {
            let prev = got[..r].iter().rev().find_map(|v| *v);
            let next = got[r + 1..].iter().find_map(|v| *v);
            got[r] = fill(prev, next);
        }
        blank.iter().all(|&r| match (got[r], value(r)) {
            (Some(g), Some(t)) => (g - t).abs() <= tolerance + 1e-9,
            _ => false,
        })
    })
}

fn to_csv(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = header.join(",");
    s.push('\n');
    for r in rows {
        s.push_str(&r.join(","));
        s.push('\n');
    }
    s
}

/// Recomputes interpolation targets from the blanked series: the truth of a
/// gap is the straight line between the recorded days around it.
fn interpolate(rows: &mut [Vec<String>], blank: &BTreeSet<usize>) {
    let known: Vec<usize> = (0..rows.len()).filter(|r| !blank.contains(r)).collect();
    for &r in blank {
        let before = known.iter().rev().find(|&&k| k < r).copied();
        let after = known.iter().find(|&&k| k > r).copied();
        if let (Some(a), Some(b)) = (before, after) {
            let va: f64 = rows[a][1].parse().unwrap_or(0.0);
            let vb: f64 = rows[b][1].parse().unwrap_or(0.0);
            let v = va + (vb - va) * (r - a) as f64 / (b - a) as f64;
            rows[r][1] = format!("{v:.4}");
        }
    }
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("data-completion");
    let task_type = match (p.domain, p.task_type) {
        (Some(d), Some(t)) if t.domain() != d => {
            return Err(format!(
                "data_completion task type `{}` belongs to domain `{}`, not `{}`",
                t.name(),
                t.domain().name(),
                d.name()
            ));
        }
        (_, Some(t)) => t,
        (Some(d), None) => d.types()[rng.random_range(0..2)],
        (None, None) => {
            let d = DataDomain::ALL[rng.random_range(0..DataDomain::ALL.len())];
            d.types()[rng.random_range(0..2)]
        }
    };
    let domain = task_type.domain();
    let level = p
        .difficulty
        .unwrap_or_else(|| Level::ALL[rng.random_range(0..Level::ALL.len())]);
    let (rate, run, preset_rows) = level.preset();
    let rows = p.rows.unwrap_or(preset_rows);
    if !(12..=400).contains(&rows) {
        return Err(format!(
            "data_completion `rows` must be between 12 and 400, found {rows}"
        ));
    }
    let today = parse_date(ctx.date)?;
    let mut data_rng = ctx.rng("data-completion/table");
    let table = build(task_type, &mut data_rng, rows, today)?;
    let (target, tolerance) = table.targets[data_rng.random_range(0..table.targets.len())];
    let col = table
        .header
        .iter()
        .position(|h| *h == target)
        .ok_or("target column missing")?;
    // Blanks are drawn again (a bounded number of times) while a fill that never
    // reads the table's rules would be within the tolerance on every blank: zero,
    // the neighbour above or below, their mean, or the column's mean. On a flat
    // stretch interpolation is no work, and in a table with one or two gaps a
    // neighbour or the midpoint was the answer in 3-8% of instances (issue 37).
    let mut tries = 0;
    let (blank, truth) = loop {
        let mut blank = blank_rows(&mut data_rng, &table, target, rate, run);
        let mut truth = table.rows.clone();
        if task_type == TaskType::DailyInterpolation {
            blank = widen_a_gap(&table, target, blank);
            interpolate(&mut truth, &blank);
        }
        tries += 1;
        if tries >= 64 || !blind_fill_passes(&truth, &blank, col, tolerance) {
            break (blank, truth);
        }
    };
    let mut input = table.rows.clone();
    for &r in &blank {
        input[r][col] = String::new();
    }
    let input_csv = to_csv(&table.header, &input);
    let expected_csv = to_csv(&table.header, &truth);

    let folder = ctx.folder("drive/data_completion");
    let handbook = format!("{folder}/data_completion_handbook.md");
    let dataset = format!("{folder}/{}/{}.csv", domain.name(), task_type.file());
    let output = format!(
        "workspace/data_completion_{}{}.csv",
        task_type.file(),
        ctx.suffix()
    );
    let mut files = vec![
        FileSpec {
            path: handbook.clone(),
            content: Content::Text(corpus::fill(HANDBOOK, &[("company", corpus::COMPANY)])),
        },
        FileSpec {
            path: dataset.clone(),
            content: Content::Text(input_csv),
        },
    ];

    let task = ctx.task_key();
    let mut plan = vec![
        step("read_file", json!({"path": handbook})),
        step("read_file", json!({"path": dataset})),
    ];
    let mut clues = Vec::new();
    let mut resource_cp = None;
    let mut resource_note = String::new();
    let mut people = 0;
    if let Some(res) = &table.resource {
        let folder = match res.dept {
            "Finance" => ctx.folder("drive/finance/reference"),
            _ => ctx.folder("drive/sales/logistics"),
        };
        let path = format!("{folder}/{}", res.file);
        files.push(FileSpec {
            path: path.clone(),
            content: Content::Text(res.csv.clone()),
        });
        let members = ctx.company.department(res.dept);
        let Some(contact) = members
            .iter()
            .find(|p| !p.position.ends_with("Manager"))
            .or(members.first())
            .copied()
        else {
            return Err(format!("the company has no {} department", res.dept));
        };
        for m in &members {
            clues.push((
                m.key.clone(),
                Clue {
                    key: format!("clue/{}/{}", ctx.id, slug(&m.name)),
                    task: Some(task.clone()),
                    trigger: res.trigger.clone(),
                    after: vec![Condition::Released(task.clone())],
                    response: format!(
                        "{} are in `{path}`. Please use that table rather than older copies.",
                        res.what
                    ),
                },
            ));
        }
        let mut read = step("read_messages", json!({"with": contact.key}));
        read.gate = Gate::ReplyFrom(contact.key.clone());
        plan.push(step(
            "send_message",
            json!({"to": contact.key, "text": format!("Hi {}, {}", contact.name, res.question)}),
        ));
        plan.push(read);
        plan.push(step("read_file", json!({"path": path})));
        people = 1;
        resource_note = format!(
            " {} are not in the dataset; {} keeps them, so ask someone there.",
            res.what, res.dept
        );
        resource_cp = Some(CheckpointSpec {
            key: "resource_consulted".into(),
            description: format!("Read the {} table {} pointed to", res.file, res.dept),
            weight: 1,
            check: Check::Consulted(path.clone()),
            feedback: format!(
                "The reference table the relation needs was not read. {} keeps it; ask someone in {} where it is instead of assuming values.",
                res.what, res.dept
            ),
        });
    }
    plan.push(step(
        "write_file",
        json!({"path": output, "content": expected_csv}),
    ));

    let others: Vec<String> = table
        .header
        .iter()
        .filter(|h| **h != target)
        .map(|h| (*h).to_owned())
        .collect();
    let mut checkpoints = vec![CheckpointSpec {
        key: "handbook_consulted".into(),
        description: "Read the data-completion handbook".into(),
        weight: 1,
        check: Check::Consulted(handbook.clone()),
        feedback: format!(
            "The handbook was not read. `{handbook}` states how the columns of each kind of table relate; compute the gaps from it."
        ),
    }];
    checkpoints.extend(resource_cp);
    checkpoints.push(CheckpointSpec {
        key: "table_intact".into(),
        description: format!(
            "`{output}` is the whole table completed: header, rows and other columns unchanged, every gap filled correctly"
        ),
        weight: 1,
        check: Check::All(vec![
            Check::CsvTable {
                path: output.clone(),
                expected: expected_csv.clone(),
                columns: others,
                tolerance: 0.0,
            },
            Check::CsvTable {
                path: output.clone(),
                expected: expected_csv.clone(),
                columns: vec![target.to_owned()],
                tolerance,
            },
        ]),
        feedback: format!(
            "`{output}` is missing, or changes something besides the gaps (header, row order, row count or another column), or some gaps are wrong. Copy the table, fill only the blank cells of the incomplete column, and keep cells that are blank by definition blank."
        ),
    });
    checkpoints.push(CheckpointSpec {
        key: "values_correct".into(),
        description: "Every filled value is right".into(),
        weight: 2,
        check: Check::CsvTable {
            path: output.clone(),
            expected: expected_csv,
            columns: vec![target.to_owned()],
            tolerance,
        },
        feedback: "Some filled values are wrong. Use the handbook's relation for this kind of table (turned around when a part rather than the total is missing), the reference data its owners keep, and the precision the table uses.".into(),
    });

    let relation_hint = match task_type {
        TaskType::QoqRate => "Work per entity and quarter; the first quarter's qoq stays blank.",
        TaskType::DailyInterpolation => {
            "Interpolate on a straight line between the recorded days on either side, weighted by the distance in days."
        }
        TaskType::RollingAvg => {
            "Average the day's metric with up to six days before it (fewer at the start of the table)."
        }
        TaskType::TaxFee => {
            "A fee is the amount times its category's rate; turn it around for a missing amount."
        }
        TaskType::EtaDistanceSla => {
            "The ETA is distance over the carrier's speed plus its handling time; turn it around for a missing distance."
        }
        _ => "Turn the relation around when a part rather than the total is missing.",
    };
    let spec = ctx
        .task_spec::<super::meta_task::DataCompletion>(format!(
            "data_completion/{}/{}/{}",
            domain.name(),
            task_type.name(),
            level.name()
        ))
        .key(task)
        .title(format!("Complete the {} data", domain.name()))
        .objective(format!(
            "Some values are missing from the {} dataset `{dataset}`. Please complete it: the handbook `{handbook}` explains how the columns relate. Fill only the blank cells of the column with gaps and change nothing else.{resource_note} Save the completed table as `{output}` with the same columns and rows, in the same order.",
            domain.name()
        ))
        .checkpoints(checkpoints)
        .hints(vec![
            "The handbook has a section for each kind of table; find the one matching this table's columns.".into(),
            match &table.resource {
                Some(r) => format!("Every gap can be computed exactly, but the relation needs reference data that {} keeps.", r.dept),
                None => "Every gap can be computed exactly from the other cells of its row or the rows around it.".into(),
            },
            relation_hint.into(),
        ])
        .plan(plan, people)
        .build();
    Ok(Parts {
        tasks: vec![spec],
        files,
        meetings: Vec::new(),
        clues,
        ..Default::default()
    })
}

const HANDBOOK: &str = include_str!("corpus/data_completion/handbook.md");

/// Plausible but wrong completions: every gap filled with 0, and every gap filled
/// with the mean of the column's known cells.
pub fn wrong_answers(task: &TaskSpec, scenario: &Scenario) -> Vec<(String, String)> {
    let Some((path, target)) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::CsvTable { path, columns, .. } if c.key == "values_correct" => {
            Some((path.clone(), columns.first().cloned().unwrap_or_default()))
        }
        _ => None,
    }) else {
        return Vec::new();
    };
    let dataset = task
        .plan
        .get(1)
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s.args).ok())
        .and_then(|v| v["path"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let Some(input) = scenario
        .files
        .iter()
        .find(|f| f.path == dataset)
        .and_then(|f| match &f.content {
            Content::Text(t) => tbsim_scenario::check::parse_csv(t),
            Content::Sidecar { .. } | Content::Drawing(_) => None,
        })
    else {
        return Vec::new();
    };
    let Some(col) = input
        .first()
        .and_then(|h| h.iter().position(|c| *c == target))
    else {
        return Vec::new();
    };
    let known: Vec<f64> = input[1..]
        .iter()
        .filter_map(|r| r[col].parse::<f64>().ok())
        .collect();
    let mean = known.iter().sum::<f64>() / known.len().max(1) as f64;
    let fill = |v: String| -> String {
        let mut rows = input.clone();
        for r in rows.iter_mut().skip(1) {
            let q1_qoq = target == "qoq" && r.get(1).is_some_and(|q| q.ends_with("-Q1"));
            if r[col].is_empty() && !q1_qoq {
                r[col] = v.clone();
            }
        }
        rows.iter().map(|r| r.join(",") + "\n").collect()
    };
    vec![
        (path.clone(), fill("0".into())),
        (path, fill(format!("{mean:.4}"))),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use tbsim_core::rng::stream;

    #[test]
    fn variants_count_domain_types_times_difficulties() {
        let v = variants();
        assert_eq!(v.len(), 60);
        let keys: BTreeSet<&str> = v.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys.len(), 60);
        for d in DataDomain::ALL {
            for t in d.types() {
                assert_eq!(t.domain(), d);
            }
        }
    }

    #[test]
    fn dates_shift_across_months_and_years() {
        let d = |y, m, d| Date::new(y, m, d).unwrap();
        assert_eq!(shift_date(d(2025, 10, 1), -1), d(2025, 9, 30));
        assert_eq!(shift_date(d(2025, 1, 1), -1), d(2024, 12, 31));
        assert_eq!(shift_date(d(2024, 2, 28), 1), d(2024, 2, 29));
        assert_eq!(shift_date(d(2024, 3, 1), -366), d(2023, 3, 1));
    }

    fn num(s: &str) -> Option<f64> {
        s.parse().ok()
    }

    /// Fills the blanks of a published table the way an agent would, using only
    /// the table, the handbook's relation and the reference data.
    fn agent_fill(t: TaskType, rows: &mut [Vec<String>], target: usize, resource: Option<&str>) {
        let reference: Vec<Vec<String>> = resource
            .and_then(tbsim_scenario::check::parse_csv)
            .unwrap_or_default();
        let lookup = |key: &str, col: usize| -> f64 {
            reference
                .iter()
                .find(|r| r[0] == key)
                .and_then(|r| num(&r[col]))
                .unwrap_or(f64::NAN)
        };
        let n = rows.len();
        let blank: Vec<usize> = (0..n).filter(|&r| rows[r][target].is_empty()).collect();
        let sum_rel = |rows: &mut [Vec<String>], parts: &[usize], total: usize, r: usize| {
            let v = |c: usize| num(&rows[r][c]).unwrap_or(0.0);
            let value = if target == total {
                parts.iter().map(|&c| v(c)).sum::<f64>()
            } else {
                v(total)
                    - parts
                        .iter()
                        .filter(|&&c| c != target)
                        .map(|&c| v(c))
                        .sum::<f64>()
            };
            rows[r][target] = format!("{value:.2}");
        };
        match t {
            TaskType::QuarterFromMonths => {
                for r in blank {
                    sum_rel(rows, &[2, 3, 4], 5, r);
                }
            }
            TaskType::TotalFromItems => {
                for r in blank {
                    sum_rel(rows, &[2, 3, 4], 5, r);
                }
            }
            TaskType::AccountBalanceFromDetails | TaskType::SegmentTimeSum => {
                for r in blank {
                    sum_rel(rows, &[1, 2, 3], 4, r);
                }
            }
            TaskType::EndingFromFlow => {
                for r in blank {
                    let v = |c: usize| num(&rows[r][c]).unwrap_or(0.0);
                    // ending = begin + in - out - shrink, solved for the target.
                    let signs = [(2, 1.0), (3, 1.0), (4, -1.0), (5, -1.0), (6, -1.0)];
                    let rest: f64 = signs
                        .iter()
                        .filter(|(c, _)| *c != target)
                        .map(|(c, s)| s * v(*c))
                        .sum();
                    let own = signs.iter().find(|(c, _)| *c == target).unwrap().1;
                    rows[r][target] = format!("{}", -rest / own);
                }
            }
            TaskType::QoqRate => {
                if target == 3 {
                    for r in blank {
                        if rows[r][1].ends_with("-Q1") {
                            continue;
                        }
                        let (a, b) = (num(&rows[r - 1][2]).unwrap(), num(&rows[r][2]).unwrap());
                        rows[r][3] = format!("{:.6}", (b - a) / a);
                    }
                } else {
                    // Forward from a known previous quarter, else backward.
                    for _ in 0..4 {
                        for r in 0..n {
                            if !rows[r][2].is_empty() {
                                continue;
                            }
                            let same = |o: usize| rows[o][0] == rows[r][0];
                            if r > 0 && same(r - 1) && !rows[r - 1][2].is_empty() {
                                let prev = num(&rows[r - 1][2]).unwrap();
                                let q = num(&rows[r][3]).unwrap();
                                rows[r][2] = format!("{}", (prev * (1.0 + q)).round());
                            } else if r + 1 < n && same(r + 1) && !rows[r + 1][2].is_empty() {
                                let next = num(&rows[r + 1][2]).unwrap();
                                let q = num(&rows[r + 1][3]).unwrap();
                                rows[r][2] = format!("{}", (next / (1.0 + q)).round());
                            }
                        }
                    }
                }
            }
            TaskType::TaxFee => {
                for r in blank {
                    let rate = lookup(&rows[r][2], 1);
                    if target == 4 {
                        rows[r][4] = format!("{:.2}", num(&rows[r][3]).unwrap() * rate);
                    } else {
                        rows[r][3] = format!("{:.2}", num(&rows[r][4]).unwrap() / rate);
                    }
                }
            }
            TaskType::DepreciationStraightLine => {
                for r in blank {
                    let v = |c: usize| num(&rows[r][c]).unwrap_or(0.0);
                    let value = match target {
                        1 => v(4) * v(3) + v(2),
                        2 => v(1) - v(4) * v(3),
                        3 => (v(1) - v(2)) / v(4),
                        _ => (v(1) - v(2)) / v(3),
                    };
                    rows[r][target] = format!("{value:.2}");
                }
            }
            TaskType::EtaDistanceSla => {
                for r in blank {
                    let (speed, handling) = (lookup(&rows[r][2], 1), lookup(&rows[r][2], 2));
                    if target == 3 {
                        let d = num(&rows[r][1]).unwrap();
                        rows[r][3] = format!("{:.2}", d / speed + handling);
                    } else {
                        let e = num(&rows[r][3]).unwrap();
                        rows[r][1] = format!("{:.2}", (e - handling) * speed);
                    }
                }
            }
            TaskType::DailyInterpolation => {
                let known: Vec<usize> = (0..n).filter(|r| !blank.contains(r)).collect();
                for &r in &blank {
                    let a = *known.iter().rev().find(|&&k| k < r).unwrap();
                    let b = *known.iter().find(|&&k| k > r).unwrap();
                    let (va, vb) = (num(&rows[a][1]).unwrap(), num(&rows[b][1]).unwrap());
                    let v = va + (vb - va) * (r - a) as f64 / (b - a) as f64;
                    rows[r][1] = format!("{v:.2}");
                }
            }
            TaskType::RollingAvg => {
                for r in blank {
                    let from = r.saturating_sub(6);
                    let w: Vec<f64> = (from..=r).map(|i| num(&rows[i][1]).unwrap()).collect();
                    rows[r][2] = format!("{:.4}", w.iter().sum::<f64>() / w.len() as f64);
                }
            }
            TaskType::Funnel => {
                for r in blank {
                    let v = |c: usize| num(&rows[r][c]).unwrap_or(0.0);
                    let value = match target {
                        1 => format!("{}", (v(3) / v(2)).round()),
                        2 => format!("{:.4}", v(3) / v(1)),
                        _ => format!("{}", (v(1) * v(2)).round()),
                    };
                    rows[r][target] = value;
                }
            }
        }
    }

    #[test]
    fn blind_fills_are_caught_by_rule() {
        let col =
            |v: &[&str]| -> Vec<Vec<String>> { v.iter().map(|x| vec![(*x).to_owned()]).collect() };
        let one = BTreeSet::from([1usize]);
        // The midpoint of the neighbours.
        assert!(blind_fill_passes(
            &col(&["10", "20", "30", "90"]),
            &one,
            0,
            0.5
        ));
        // The neighbour above.
        assert!(blind_fill_passes(
            &col(&["10", "10", "30", "90"]),
            &one,
            0,
            0.5
        ));
        // The mean of the known values (10, 50, 90).
        assert!(blind_fill_passes(
            &col(&["10", "50", "50", "90"]),
            &one,
            0,
            0.5
        ));
        // Zero.
        assert!(blind_fill_passes(
            &col(&["10", "0", "30", "90"]),
            &one,
            0,
            0.5
        ));
        // None of them.
        assert!(!blind_fill_passes(
            &col(&["10", "17", "30", "90"]),
            &one,
            0,
            0.5
        ));
        // One rule must fit every blank: midpoint on one, neighbour on the other.
        let two = BTreeSet::from([1usize, 3]);
        assert!(!blind_fill_passes(
            &col(&["10", "20", "30", "30", "70"]),
            &two,
            0,
            0.5
        ));
    }

    /// Every kind, every preset, many seeds: an agent that only applies the
    /// handbook's relations to the published data (rounding to the table's
    /// precision) scores on every cell. No gap is uncomputable and no tolerance
    /// depends on luck.
    #[test]
    fn every_gap_is_computable_from_the_published_data() {
        for d in DataDomain::ALL {
            for t in d.types() {
                for level in Level::ALL {
                    for seed in 0..5u64 {
                        let mut rng = stream(seed, &format!("{}/{}", t.name(), level.name()));
                        let (rate, run, rows) = level.preset();
                        let table =
                            build(t, &mut rng, rows, Date::new(2025, 10, 1).unwrap()).unwrap();
                        for &(target, tol) in &table.targets {
                            let col = table.header.iter().position(|h| *h == target).unwrap();
                            let mut blank = blank_rows(&mut rng, &table, target, rate, run);
                            assert!(!blank.is_empty());
                            let mut truth = table.rows.clone();
                            if t == TaskType::DailyInterpolation {
                                blank = widen_a_gap(&table, target, blank);
                                assert!(
                                    blank.iter().any(|r| blank.contains(&(r + 1))),
                                    "seed {seed}: interpolation has a gap of two days"
                                );
                                interpolate(&mut truth, &blank);
                            }
                            let mut published = table.rows.clone();
                            for &r in &blank {
                                published[r][col] = String::new();
                            }
                            let before = published.clone();
                            agent_fill(
                                t,
                                &mut published,
                                col,
                                table.resource.as_ref().map(|r| r.csv.as_str()),
                            );
                            let check = Check::CsvTable {
                                path: "w".into(),
                                expected: to_csv(&table.header, &truth),
                                columns: vec![target.into()],
                                tolerance: tol,
                            };
                            let got = to_csv(&table.header, &published);
                            let view = View(got.clone());
                            assert!(
                                tbsim_scenario::check::evaluate(&check, &view),
                                "{} {} {target} seed {seed}:\n{got}",
                                t.name(),
                                level.name()
                            );
                            // The untouched published table fails.
                            let view = View(to_csv(&table.header, &before));
                            assert!(!tbsim_scenario::check::evaluate(&check, &view));
                        }
                    }
                }
            }
        }
    }

    struct View(String);
    impl tbsim_scenario::check::WorldView for View {
        fn file(&self, _: &str) -> Option<&[u8]> {
            Some(self.0.as_bytes())
        }
    }

    #[test]
    fn blanking_respects_presets_and_constraints() {
        let mut rng = stream(9, "blank");
        let table = build(
            TaskType::QoqRate,
            &mut rng,
            40,
            Date::new(2025, 10, 1).unwrap(),
        )
        .unwrap();
        for _ in 0..50 {
            let b = blank_rows(&mut rng, &table, "quarter_total", 0.35, 7);
            let (_, groups) = table.keep_one.as_ref().unwrap();
            for g in 0..10 {
                let known = (0..40)
                    .filter(|r| groups[*r] == g && !b.contains(r))
                    .count();
                assert!(known >= 1, "entity {g} keeps a known quarter");
            }
            assert!(b.len() >= 14);
            let q = blank_rows(&mut rng, &table, "qoq", 0.35, 7);
            assert!(q.iter().all(|&r| !table.rows[r][1].ends_with("-Q1")));
        }
        let series = build(
            TaskType::DailyInterpolation,
            &mut rng,
            30,
            Date::new(2025, 10, 1).unwrap(),
        )
        .unwrap();
        for _ in 0..50 {
            let b = blank_rows(&mut rng, &series, "stock_level", 0.35, 7);
            assert!(!b.contains(&0) && !b.contains(&29));
            assert!(b.len() >= 10);
        }
        let single = build(
            TaskType::Funnel,
            &mut rng,
            30,
            Date::new(2025, 10, 1).unwrap(),
        )
        .unwrap();
        assert_eq!(blank_rows(&mut rng, &single, "ctr", 0.05, 0).len(), 1);
    }

    #[test]
    fn same_variant_different_seeds_give_different_tables() {
        let tables: BTreeSet<String> = (0..20u64)
            .map(|seed| {
                let mut rng = stream(seed, "t");
                let t = build(
                    TaskType::QuarterFromMonths,
                    &mut rng,
                    30,
                    Date::new(2025, 10, 1).unwrap(),
                )
                .unwrap();
                to_csv(&t.header, &t.rows)
            })
            .collect();
        assert_eq!(tables.len(), 20);
    }
}
