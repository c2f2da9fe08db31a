//! ADs strategy: choose outdoor advertising channels for a city campaign within a budget.
//!
//! Model: the city's planning grid has one target-density heatmap per audience group
//! (one or two Gaussian hot spots, min-max normalised and rounded to 0-5). The values
//! exist only in the PNG heatmaps on the drive (drawn by [`tbsim_scenario::Drawing::png`]), so the
//! agent must look at the image for its campaign's group; the other groups' maps are
//! distractors. Channels sit on grid cells with a weekly cost, a base effect and an
//! audience fit for the campaign's group. A channel's effective exposure is
//! `base_effect * (0.5 + 0.5 * density / 5) * audience_fit`, rounded to cents, and the
//! best plan maximises total exposure within the budget: an exact 0/1 knapsack, judged
//! by `Check::Domain(Budget)` so that every optimal selection passes. Marketing staff
//! point to the handbook and the files when asked.
//!
//! Deliberate differences from the reference: the difficulty names are honoured (the
//! reference fell back to medium for "very easy" and "very hard"); the city matters: it
//! keys the random streams, sets the price level (costs and budget) and tilts the mix of
//! channel types, and it names the channels and files; every seed gives a new world
//! (the reference reseeded with 42, leaving three distinct instances); the budget is
//! enforced (an over-budget plan fails every answer checkpoint, and reported totals only
//! count for a plan within budget); any optimal selection passes, not one fixed set; the
//! audience group can be any of the three, with audience fits per group; an optional
//! overspend allowance (`budget_tolerance`, default 0) widens the limit explicitly; the
//! handbook states the output format; the answer key is never on the drive.

use std::fmt::Write as _;

use rand::RngExt;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Ctx, Parts, company::slug, corpus, step};
use tbsim_scenario::check::budget_best;
use tbsim_scenario::text_width;
use tbsim_scenario::{
    BudgetAspect, BudgetCheck, Check, CheckpointSpec, Clue, Condition, Content, DomainCheck,
    Drawing, FileSpec, Gate, Scenario, Shape, TaskSpec,
};

const HANDBOOK: &str = include_str!("corpus/ads_strategy/handbook.md");

/// Difficulty presets (budget, channel count, grid size, hot spots, cost and effect ranges).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Level {
    /// 7 000 budget, 8 channels, 8x8 grid, 1 hot spot.
    VeryEasy,
    /// 8 000, 20 channels, 10x10, 1 hot spot.
    Easy,
    /// 10 000, 28 channels, 12x12, 1 hot spot.
    Medium,
    /// 11 000, 32 channels, 15x15, 2 hot spots.
    Hard,
    /// 12 000, 36 channels, 18x18, 2 hot spots.
    VeryHard,
}

const LEVELS: [Level; 5] = [
    Level::VeryEasy,
    Level::Easy,
    Level::Medium,
    Level::Hard,
    Level::VeryHard,
];

impl Level {
    /// The variant key part.
    pub fn key(self) -> &'static str {
        match self {
            Level::VeryEasy => "very_easy",
            Level::Easy => "easy",
            Level::Medium => "medium",
            Level::Hard => "hard",
            Level::VeryHard => "very_hard",
        }
    }

    /// Parses a difficulty name as the reference writes it (`"very easy"`) or as a key
    /// (`very_easy`), case-insensitively.
    pub fn parse(name: &str) -> Option<Level> {
        let n = name.trim().to_lowercase().replace([' ', '-'], "_");
        LEVELS.into_iter().find(|l| l.key() == n)
    }

    fn preset(self) -> Preset {
        let (budget, channels, size, centres, cost, effect) = match self {
            Level::VeryEasy => (7_000, 8, 8, 1, (300, 2_500), (600, 3_000)),
            Level::Easy => (8_000, 20, 10, 1, (350, 3_200), (700, 3_800)),
            Level::Medium => (10_000, 28, 12, 1, (400, 4_000), (800, 5_000)),
            Level::Hard => (11_000, 32, 15, 2, (450, 4_500), (900, 5_600)),
            Level::VeryHard => (12_000, 36, 18, 2, (500, 5_000), (1_000, 6_000)),
        };
        Preset {
            budget,
            channels,
            size,
            centres,
            cost,
            effect,
        }
    }
}

struct Preset {
    budget: u32,
    channels: usize,
    size: u32,
    centres: u32,
    cost: (u32, u32),
    effect: (u32, u32),
}

/// Audience groups; each has its own heatmap and audience fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Group {
    /// College students, 18-25 (the reference's only target group).
    CollegeStudents,
    /// Young professionals, 25-35.
    YoungProfessionals,
    /// Seniors, 60 and over.
    Seniors,
}

const GROUPS: [Group; 3] = [
    Group::CollegeStudents,
    Group::YoungProfessionals,
    Group::Seniors,
];

impl Group {
    /// File-name key.
    pub fn key(self) -> &'static str {
        match self {
            Group::CollegeStudents => "college_students_18_25",
            Group::YoungProfessionals => "young_professionals_25_35",
            Group::Seniors => "seniors_60_plus",
        }
    }
    fn label(self) -> &'static str {
        match self {
            Group::CollegeStudents => "college students (18-25)",
            Group::YoungProfessionals => "young professionals (25-35)",
            Group::Seniors => "seniors (60+)",
        }
    }
    /// Audience fit in percent for each channel type (subway, mall, bus, campus).
    fn fits(self) -> [u32; 4] {
        match self {
            Group::CollegeStudents => [60, 60, 50, 90],
            Group::YoungProfessionals => [85, 70, 45, 30],
            Group::Seniors => [40, 55, 80, 10],
        }
    }
}

/// Channel-type weights (subway, mall, bus, campus) before the city's tilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChannelMix {
    /// Equal weights (the reference's only mix).
    Balanced,
    /// Mostly metro panels and bus shelters.
    TransitHeavy,
    /// Mostly mall screens.
    RetailHeavy,
    /// Mostly campus screens.
    CampusHeavy,
}

impl ChannelMix {
    fn weights(self) -> [f64; 4] {
        match self {
            ChannelMix::Balanced => [1.0, 1.0, 1.0, 1.0],
            ChannelMix::TransitHeavy => [2.0, 0.5, 2.0, 0.5],
            ChannelMix::RetailHeavy => [0.7, 2.5, 0.7, 0.5],
            ChannelMix::CampusHeavy => [0.7, 0.6, 0.7, 2.5],
        }
    }
}

/// Channel types: CSV value and readable label.
const TYPES: [(&str, &str); 4] = [
    ("subway", "Metro Panel"),
    ("mall_screen", "Mall Screen"),
    ("bus_stop", "Bus Shelter"),
    ("campus_screen", "Campus Screen"),
];

/// A city: display name, accepted spellings, price index, channel-type tilt.
struct City {
    name: &'static str,
    aliases: &'static [&'static str],
    price: f64,
    tilt: [f64; 4],
}

/// The reference's ten cities, each with its own price level and placement mix.
const CITIES: [City; 10] = [
    City {
        name: "Shanghai",
        aliases: &[],
        price: 1.25,
        tilt: [1.4, 1.2, 0.8, 0.8],
    },
    City {
        name: "Beijing",
        aliases: &[],
        price: 1.2,
        tilt: [1.4, 1.0, 1.0, 1.0],
    },
    City {
        name: "Guangzhou",
        aliases: &[],
        price: 1.05,
        tilt: [1.1, 1.3, 1.0, 0.8],
    },
    City {
        name: "Shenzhen",
        aliases: &[],
        price: 1.15,
        tilt: [1.2, 1.4, 0.8, 0.8],
    },
    City {
        name: "Hangzhou",
        aliases: &[],
        price: 1.0,
        tilt: [1.0, 1.2, 1.0, 1.0],
    },
    City {
        name: "Chengdu",
        aliases: &[],
        price: 0.9,
        tilt: [1.0, 1.1, 1.1, 1.0],
    },
    City {
        name: "Wuhan",
        aliases: &[],
        price: 0.9,
        tilt: [0.9, 0.9, 1.0, 1.4],
    },
    City {
        name: "Nanjing",
        aliases: &[],
        price: 0.95,
        tilt: [1.0, 1.0, 1.0, 1.3],
    },
    City {
        name: "Chongqing",
        aliases: &[],
        price: 0.85,
        tilt: [0.8, 1.0, 1.5, 0.9],
    },
    City {
        name: "Xi'an",
        aliases: &["XiAn", "Xian"],
        price: 0.85,
        tilt: [0.9, 0.9, 1.1, 1.3],
    },
];

/// The city names accepted by `city`.
pub fn cities() -> Vec<&'static str> {
    CITIES.iter().map(|c| c.name).collect()
}

fn find_city(name: &str) -> Option<&'static City> {
    let n = slug(name);
    CITIES
        .iter()
        .find(|c| slug(c.name) == n || c.aliases.iter().any(|a| slug(a) == n))
}

/// Parameters; unset ones come from the preset (the preset, city and group are drawn).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Preset.
    #[serde(default)]
    pub difficulty: Option<Level>,
    /// One of the ten cities (see [`cities`]).
    #[serde(default)]
    pub city: Option<String>,
    /// Budget (1 000-100 000); default: the preset's, scaled by the city's price level.
    #[serde(default)]
    pub budget: Option<u32>,
    /// Number of channels (4-60).
    #[serde(default)]
    pub num_channels: Option<usize>,
    /// Channel-type mix (default balanced).
    #[serde(default)]
    pub channel_mix: Option<ChannelMix>,
    /// Grid side (4-30).
    #[serde(default)]
    pub heatmap_size: Option<u32>,
    /// Hot spots per heatmap (1-4).
    #[serde(default)]
    pub heatmap_centers: Option<u32>,
    /// Minimum distance between hot spots, in cells (default 0.22 x size).
    #[serde(default)]
    pub heatmap_min_center_distance: Option<f64>,
    /// Hot-spot spread range in cells (default 4-10).
    #[serde(default)]
    pub heatmap_sigma: Option<(f64, f64)>,
    /// Cost range before the city's price level (50-50 000).
    #[serde(default)]
    pub cost_range: Option<(u32, u32)>,
    /// Base-effect range (50-100 000).
    #[serde(default)]
    pub effect_range: Option<(u32, u32)>,
    /// Allowed overspend as a fraction of the budget (0-0.2, default 0).
    #[serde(default)]
    pub budget_tolerance: Option<f64>,
    /// The campaign's audience group.
    #[serde(default)]
    pub target_group: Option<Group>,
}

/// The variants: one per preset.
pub fn variants() -> Vec<(String, Params)> {
    LEVELS
        .into_iter()
        .map(|l| {
            (
                format!("ads_strategy/{}", l.key()),
                Params {
                    difficulty: Some(l),
                    ..Params::default()
                },
            )
        })
        .collect()
}

/// One channel row.
#[derive(Debug, Clone)]
struct Channel {
    id: String,
    name: String,
    kind: usize,
    i: u32,
    j: u32,
    cost: u64,
    effect: u32,
    fit: u32,
}

/// Effective exposure in cents: `effect * (5 + d) / 10 * fit / 100`, rounded half up.
fn exposure_cents(effect: u32, density: u8, fit: u32) -> i64 {
    (i64::from(effect) * (5 + i64::from(density)) * i64::from(fit) + 5) / 10
}

fn dist2(dx: f64, dy: f64) -> f64 {
    dx * dx + dy * dy
}

/// `e^-t` for `t >= 0` from basic arithmetic only (range reduction by ln 2 and a
/// Taylor series), so heatmaps do not depend on the platform's `exp`: IEEE `+ - * /`
/// round the same everywhere, library transcendental functions need not.
fn exp_neg(t: f64) -> f64 {
    const LN2: f64 = std::f64::consts::LN_2;
    if t.is_nan() || t <= 0.0 {
        return 1.0;
    }
    if t > 700.0 {
        return 0.0;
    }
    let n = (t / LN2).floor();
    let r = t - n * LN2;
    let (mut term, mut sum) = (1.0f64, 1.0f64);
    for k in 1..=24 {
        term *= -r / f64::from(k);
        sum += term;
    }
    // 2^-n exactly, from the exponent bits.
    sum * f64::from_bits(((1023 - n as i64) as u64) << 52)
}

/// A heatmap: `grid[j][i]` (row `j` counted from the bottom), values 0-5.
fn heatmap(
    rng: &mut tbsim_core::rng::StreamRng,
    size: u32,
    centres: u32,
    min_dist: f64,
    sigma: (f64, f64),
) -> Vec<Vec<u8>> {
    let s = f64::from(size);
    let mut spots: Vec<(f64, f64, f64)> = Vec::new();
    for _ in 0..centres {
        let mut spot = (0.0, 0.0);
        for _ in 0..200 {
            spot = (
                rng.random_range(0.2 * s..=0.8 * s),
                rng.random_range(0.2 * s..=0.8 * s),
            );
            if spots
                .iter()
                .all(|(x, y, _)| dist2(*x - spot.0, *y - spot.1).sqrt() >= min_dist)
            {
                break;
            }
        }
        let sg = if sigma.1 > sigma.0 {
            rng.random_range(sigma.0..=sigma.1)
        } else {
            sigma.0
        };
        spots.push((spot.0, spot.1, sg));
    }
    let raw: Vec<Vec<f64>> = (0..size)
        .map(|j| {
            (0..size)
                .map(|i| {
                    spots
                        .iter()
                        .map(|(x, y, sg)| {
                            let d2 = dist2(f64::from(i) - x, f64::from(j) - y);
                            exp_neg(d2 / (2.0 * sg * sg))
                        })
                        .sum()
                })
                .collect()
        })
        .collect();
    let lo = raw.iter().flatten().copied().fold(f64::INFINITY, f64::min);
    let hi = raw
        .iter()
        .flatten()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    raw.iter()
        .map(|row| {
            row.iter()
                .map(|v| {
                    if hi > lo {
                        ((v - lo) / (hi - lo) * 5.0).round() as u8
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

const SHADES: [&str; 6] = [
    "#ffffff", "#fde4dc", "#f9bba6", "#f48c70", "#e8573d", "#c21d1d",
];
const INK: &str = "#1a1a1a";
const GRID: &str = "#8a8a8a";

/// The heatmap as a picture: every cell coloured and labelled with its value, columns
/// (`grid_i`) numbered along the bottom, rows (`grid_j`) up the left with row 0 at the
/// bottom, and a legend. A cell is three characters wide, so a whole row of values is
/// one text shape (one per ink colour) and runs of equal cells one rectangle: the
/// recipe stays small.
fn heatmap_drawing(grid: &[Vec<u8>], group: Group, city: &str) -> Drawing {
    let n = grid.len() as i32;
    let scale: u32 = if n <= 18 { 2 } else { 1 };
    let s = scale as i32;
    let cell = 18 * s;
    let (left, top) = (72, 84);
    let width = (left + n * cell + 150).max(600);
    let height = top + n * cell + 76;
    let mut shapes = vec![
        Shape::Text(left, 14, 2, INK.into(), "TARGET USER DENSITY".into()),
        Shape::Text(
            left,
            42,
            2,
            INK.into(),
            format!("{} - {}", group.label(), city).to_uppercase(),
        ),
    ];
    for (j, row) in grid.iter().enumerate() {
        let y = top + (n - 1 - j as i32) * cell;
        let mut i = 0;
        while i < row.len() {
            let run = row[i..].iter().take_while(|v| **v == row[i]).count();
            shapes.push(Shape::Rect(
                left + i as i32 * cell,
                y,
                (run as i32 * cell) as u32,
                cell as u32,
                SHADES[usize::from(row[i])].into(),
            ));
            i += run;
        }
    }
    for k in 0..=n {
        let at = k * cell;
        shapes.push(Shape::Line(
            left + at,
            top,
            left + at,
            top + n * cell,
            1,
            GRID.into(),
        ));
        shapes.push(Shape::Line(
            left,
            top + at,
            left + n * cell,
            top + at,
            1,
            GRID.into(),
        ));
    }
    // Values: light ink on the two darkest shades, dark ink elsewhere.
    for (j, row) in grid.iter().enumerate() {
        let y = top + (n - 1 - j as i32) * cell + (cell - 7 * s) / 2;
        for (light, ink) in [(false, INK), (true, "#ffffff")] {
            let text: String = row
                .iter()
                .map(|v| {
                    if (*v >= 4) == light {
                        format!(" {v} ")
                    } else {
                        "   ".to_owned()
                    }
                })
                .collect();
            let text = text.trim_end().to_owned();
            if !text.is_empty() {
                shapes.push(Shape::Text(left, y, scale, ink.into(), text));
            }
        }
    }
    let base = top + n * cell;
    let columns: String = (0..n).map(|k| format!("{k:>2} ")).collect();
    shapes.push(Shape::Text(
        left,
        base + 8,
        scale,
        INK.into(),
        columns.trim_end().to_owned(),
    ));
    for k in 0..n {
        let t = k.to_string();
        let y = top + (n - 1 - k) * cell + (cell - 7 * s) / 2;
        shapes.push(Shape::Text(
            left - 8 - text_width(&t, scale) as i32,
            y,
            scale,
            INK.into(),
            t,
        ));
    }
    let title = "GRID_I (COLUMN)";
    shapes.push(Shape::Text(
        left + n * cell / 2 - text_width(title, 2) as i32 / 2,
        base + 34,
        2,
        INK.into(),
        title.into(),
    ));
    shapes.push(Shape::Text(
        8,
        top - 20,
        1,
        INK.into(),
        "GRID_J (ROW, 0 AT BOTTOM)".into(),
    ));
    let lx = left + n * cell + 28;
    shapes.push(Shape::Text(lx, top, 2, INK.into(), "DENSITY".into()));
    for v in (0..6).rev() {
        let y = top + 28 + (5 - v) * 30;
        shapes.push(Shape::Rect(lx - 1, y - 1, 26, 26, GRID.into()));
        shapes.push(Shape::Rect(lx, y, 24, 24, SHADES[v as usize].into()));
        shapes.push(Shape::Text(lx + 34, y + 5, 2, INK.into(), v.to_string()));
    }
    Drawing {
        width: width as u32,
        height: height as u32,
        background: "#ffffff".into(),
        shapes,
    }
}

fn round_to(v: f64, step: f64) -> f64 {
    (v / step).round() * step
}

/// Generates one instance.
pub fn generate(ctx: &Ctx<'_>, p: &Params) -> Result<Parts, String> {
    let mut rng = ctx.rng("ads/params");
    let level = p
        .difficulty
        .unwrap_or_else(|| LEVELS[rng.random_range(0..LEVELS.len())]);
    let city = match &p.city {
        Some(name) => find_city(name).ok_or_else(|| {
            format!(
                "unknown city `{name}`; expected one of: {}",
                cities().join(", ")
            )
        })?,
        None => &CITIES[rng.random_range(0..CITIES.len())],
    };
    let group = p
        .target_group
        .unwrap_or_else(|| GROUPS[rng.random_range(0..GROUPS.len())]);
    let pre = level.preset();
    let budget = p
        .budget
        .unwrap_or_else(|| round_to(f64::from(pre.budget) * city.price, 100.0) as u32);
    let n = p.num_channels.unwrap_or(pre.channels);
    let mix = p.channel_mix.unwrap_or(ChannelMix::Balanced);
    let size = p.heatmap_size.unwrap_or(pre.size);
    let centres = p.heatmap_centers.unwrap_or(pre.centres);
    let min_dist = p
        .heatmap_min_center_distance
        .unwrap_or(0.22 * f64::from(size));
    let sigma = p.heatmap_sigma.unwrap_or((4.0, 10.0));
    let cost = p.cost_range.unwrap_or(pre.cost);
    let effect = p.effect_range.unwrap_or(pre.effect);
    let tol = p.budget_tolerance.unwrap_or(0.0);
    let mut bad = Vec::new();
    if !(1_000..=100_000).contains(&budget) {
        bad.push(format!("budget {budget} (1000-100000)"));
    }
    if !(4..=60).contains(&n) {
        bad.push(format!("num_channels {n} (4-60)"));
    }
    if !(4..=30).contains(&size) {
        bad.push(format!("heatmap_size {size} (4-30)"));
    }
    if !(1..=4).contains(&centres) {
        bad.push(format!("heatmap_centers {centres} (1-4)"));
    }
    if !(min_dist.is_finite() && (0.0..=f64::from(size)).contains(&min_dist)) {
        bad.push(format!("heatmap_min_center_distance {min_dist} (0-size)"));
    }
    if !(sigma.0.is_finite()
        && sigma.1.is_finite()
        && 0.5 <= sigma.0
        && sigma.0 <= sigma.1
        && sigma.1 <= 30.0)
    {
        bad.push(format!("heatmap_sigma {sigma:?} (0.5 <= min <= max <= 30)"));
    }
    if !(50 <= cost.0 && cost.0 <= cost.1 && cost.1 <= 50_000) {
        bad.push(format!("cost_range {cost:?} (50 <= min <= max <= 50000)"));
    }
    if !(50 <= effect.0 && effect.0 <= effect.1 && effect.1 <= 100_000) {
        bad.push(format!(
            "effect_range {effect:?} (50 <= min <= max <= 100000)"
        ));
    }
    if !(tol.is_finite() && (0.0..=0.2).contains(&tol)) {
        bad.push(format!("budget_tolerance {tol} (0-0.2)"));
    }
    if !bad.is_empty() {
        return Err(format!(
            "ads_strategy parameters out of range: {}",
            bad.join(", ")
        ));
    }
    let cap = (f64::from(budget) * (1.0 + tol)).floor() as u64;

    // Heatmaps: one stream per (city, group), so the city changes every map.
    let maps: Vec<(Group, Vec<Vec<u8>>)> = GROUPS
        .iter()
        .map(|g| {
            let mut r = ctx.rng(&format!("ads/{}/heatmap/{}", slug(city.name), g.key()));
            (*g, heatmap(&mut r, size, centres, min_dist, sigma))
        })
        .collect();
    let target = &maps
        .iter()
        .find(|(g, _)| *g == group)
        .expect("every group has a map")
        .1;

    // Channels: redrawn (rarely) until buying all of them would break the budget, so
    // that "select everything" is never an answer.
    let mut crng = ctx.rng(&format!("ads/{}/channels", slug(city.name)));
    let weights: Vec<f64> = mix
        .weights()
        .iter()
        .zip(city.tilt)
        .map(|(w, t)| w * t)
        .collect();
    let total_w: f64 = weights.iter().sum();
    let mut channels = Vec::new();
    for attempt in 0..50 {
        channels.clear();
        let mut per_type = [0u32; 4];
        for k in 0..n {
            let mut x = crng.random_range(0.0..total_w);
            let kind = weights
                .iter()
                .position(|w| {
                    x -= w;
                    x < 0.0
                })
                .unwrap_or(3);
            per_type[kind] += 1;
            let c = round_to(
                f64::from(crng.random_range(cost.0..=cost.1)) * city.price,
                10.0,
            )
            .max(10.0);
            channels.push(Channel {
                id: format!("CH{:03}", k + 1),
                name: format!("{} {} {:02}", city.name, TYPES[kind].1, per_type[kind]),
                kind,
                i: crng.random_range(0..size),
                j: crng.random_range(0..size),
                cost: c as u64,
                effect: crng.random_range(effect.0..=effect.1),
                fit: group.fits()[kind],
            });
        }
        if channels.iter().map(|c| c.cost).sum::<u64>() > cap {
            break;
        }
        if attempt == 49 {
            return Err(format!(
                "the budget {budget} covers all {n} channels; raise num_channels or cost_range, or lower the budget"
            ));
        }
    }
    let items: Vec<(String, u64, f64)> = channels
        .iter()
        .map(|c| {
            let d = target[c.j as usize][c.i as usize];
            (
                c.id.clone(),
                c.cost,
                exposure_cents(c.effect, d, c.fit) as f64 / 100.0,
            )
        })
        .collect();
    let (best_cents, chosen) = budget_best(&items, cap);
    if chosen.is_empty() {
        return Err(format!(
            "no channel fits within the budget {budget}; lower cost_range"
        ));
    }

    let folder = ctx.folder("drive/marketing/ads_strategy");
    let city_slug = slug(city.name).replace('-', "_");
    let handbook = format!("{folder}/ads_strategy_handbook.md");
    let csv_path = format!("{folder}/channels_{city_slug}.csv");
    let heat_dir = format!("{folder}/heatmaps");
    let heat_path = |g: Group| format!("{heat_dir}/target_density_{}_{city_slug}.png", g.key());
    let out = format!(
        "workspace/ads_strategy_plan_{city_slug}{}.json",
        ctx.suffix()
    );

    let mut csv = String::from("id,name,type,grid_i,grid_j,cost,base_effect,audience_fit\n");
    for c in &channels {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{}.{:02}",
            c.id,
            c.name,
            TYPES[c.kind].0,
            c.i,
            c.j,
            c.cost,
            c.effect,
            c.fit / 100,
            c.fit % 100
        );
    }
    let mut files = vec![
        FileSpec {
            path: handbook.clone(),
            content: Content::Text(corpus::fill(HANDBOOK, &[("company", corpus::COMPANY)])),
        },
        FileSpec {
            path: csv_path.clone(),
            content: Content::Text(csv),
        },
    ];
    for (g, grid) in &maps {
        files.push(FileSpec {
            path: heat_path(*g),
            content: Content::Drawing(heatmap_drawing(grid, *g, city.name)),
        });
    }

    let marketing = ctx.company.department("Marketing");
    if marketing.is_empty() {
        return Err("the company has no Marketing department".into());
    }
    let task = ctx.task_key();
    let subject: Vec<String> = [
        "ads",
        "ad",
        "advertising",
        "advert",
        "campaign",
        "channel",
        "heatmap",
        "billboard",
        "placement",
        "media",
        "advertisement",
        "promotion",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    let mut clues = Vec::new();
    for person in &marketing {
        let s = slug(&person.name);
        clues.push((person.key.clone(), Clue {
            key: format!("clue/{}/{s}/handbook", ctx.id),
            task: Some(task.clone()),
            trigger: vec![
                subject.clone(),
                ["plan", "planning", "strategy", "how", "approach", "method", "handbook", "calculate", "compute", "exposure", "score", "choose", "select", "pick", "methodology", "formula", "framework", "evaluate"]
                    .iter().map(|s| (*s).to_owned()).collect(),
            ],
            after: vec![Condition::Released(task.clone())],
            response: format!(
                "For campaign plans we follow the planning handbook: `{handbook}`. It explains how a channel's effective exposure is scored and how to choose channels within the budget."
            ),
        }));
        clues.push((person.key.clone(), Clue {
            key: format!("clue/{}/{s}/files", ctx.id),
            task: Some(task.clone()),
            trigger: vec![
                subject.clone(),
                ["where", "file", "data", "material", "list", "csv", "dataset", "spreadsheet", "table", "density", "option", "cost", "price", "available", "share", "send", "access", "inventory", "image"]
                    .iter().map(|s| (*s).to_owned()).collect(),
            ],
            after: vec![Condition::Released(task.clone())],
            response: format!(
                "The {} channel list is `{csv_path}`. The target-density heatmaps are in `{heat_dir}/`, one image per audience group; use the one for your campaign's group.",
                city.name
            ),
        }));
    }
    let contact = marketing
        .iter()
        .find(|p| !p.position.ends_with("Manager"))
        .unwrap_or(&marketing[0]);

    let picked: Vec<&str> = chosen.iter().map(|&k| items[k].0.as_str()).collect();
    let total_cost: u64 = chosen.iter().map(|&k| items[k].1).sum();
    let best = best_cents as f64 / 100.0;
    let answer = json!({
        "selected_channels": picked,
        "total_cost": total_cost,
        "total_exposure": (best * 100.0).round() / 100.0,
    });
    let mut read_reply = step("read_messages", json!({"with": contact.key}));
    read_reply.gate = Gate::ReplyFrom(contact.key.clone());
    let mut plan = vec![
        step(
            "send_message",
            json!({"to": contact.key, "text": format!("Hi {}, I'm preparing the {} ads campaign plan. Where are the channel list and heatmap files, and how should I plan the campaign?", contact.name, city.name)}),
        ),
        read_reply,
        step("read_file", json!({"path": handbook})),
        step("read_file", json!({"path": csv_path})),
        step("read_file", json!({"path": heat_path(group)})),
    ];
    // Larger instances are checked with the calculator, as a careful person would.
    if matches!(level, Level::Medium | Level::Hard | Level::VeryHard) {
        let costs: Vec<String> = chosen.iter().map(|&k| items[k].1.to_string()).collect();
        let values: Vec<String> = chosen
            .iter()
            .map(|&k| format!("{:.2}", items[k].2))
            .collect();
        plan.push(step("calculator", json!({"expression": costs.join(" + ")})));
        plan.push(step(
            "calculator",
            json!({"expression": values.join(" + ")}),
        ));
    }
    plan.push(step(
        "write_file",
        json!({"path": out, "content": serde_json::to_string_pretty(&answer).unwrap_or_default()}),
    ));

    let check = |aspect: BudgetAspect| {
        Check::Domain(Box::new(DomainCheck::Budget(BudgetCheck {
            path: out.clone(),
            selection: "/selected_channels".into(),
            aspect,
            capacity: cap,
            best,
            items: items.clone(),
        })))
    };
    let limit_text = if tol > 0.0 {
        format!(
            "The total budget is {budget} CNY; Finance accepts an overspend of at most {:.0}% ({cap} CNY in all).",
            tol * 100.0
        )
    } else {
        format!("The total budget is {budget} CNY, and the plan must not exceed it.")
    };
    let spec = ctx
        .task_spec::<super::meta_task::AdsStrategy>(format!("ads_strategy/{}", level.key()))
        .key(task.clone())
        .title(format!("Plan the {} ads campaign", city.name))
        .objective(format!(
            "We are running a one-week outdoor ads campaign in {} aimed at {}. {limit_text} Build the multi-channel plan that gives the largest total effective exposure within the budget. Marketing has the planning handbook and the campaign data; ask a Marketing colleague. Save the plan as `{out}` in this form: {{\"selected_channels\": [\"CH001\", ...], \"total_cost\": ..., \"total_exposure\": ...}}.",
            city.name,
            group.label()
        ))
        .checkpoints(vec![
            CheckpointSpec {
                key: "handbook_read".into(),
                description: "Read Marketing's campaign planning handbook".into(),
                weight: 1,
                check: Check::Consulted(handbook.clone()),
                feedback: "The planning handbook was not read. Ask a Marketing colleague how campaign plans are made; they will point you to it.".into(),
            },
            CheckpointSpec {
                key: "heatmap_viewed".into(),
                description: "Looked at the target-density heatmap of the campaign's audience group".into(),
                weight: 1,
                check: Check::Consulted(heat_path(group)),
                feedback: "You did not open the target-density heatmap for the campaign's audience group. Marketing can tell you where the heatmaps are; use the one whose name matches the group in your brief.".into(),
            },
            // No separate `plan_valid` (listing every channel passed it even over
            // budget) and no separate `within_budget` (any one cheap channel passed
            // it blind): fitting the budget is part of every answer checkpoint below,
            // and its weight went to `optimal`, the plan itself.
            CheckpointSpec {
                key: "cost_reported".into(),
                description: "`total_cost` is the selection's cost (within 1%), for a plan with no room left for another channel".into(),
                weight: 2,
                check: check(BudgetAspect::Cost { pointer: "/total_cost".into(), relative: 0.01 }),
                feedback: "`total_cost` does not match the selected channels, the plan is over budget, or another channel would still fit in it. Recompute it as the sum of the selected channels' costs.".into(),
            },
            CheckpointSpec {
                key: "exposure_reported".into(),
                description: "`total_exposure` is the selection's effective exposure (within 5%), for a plan with no room left for another channel".into(),
                weight: 2,
                check: check(BudgetAspect::Value { pointer: "/total_exposure".into(), relative: 0.05 }),
                feedback: "`total_exposure` is off by more than 5% for the selected channels, or the plan is over budget. Recompute each channel's effective exposure with the handbook's formula, reading densities from the heatmap of the right audience group (row 0 is at the bottom).".into(),
            },
            CheckpointSpec {
                key: "optimal".into(),
                description: "The selection fits the budget and no selection within it has a larger total effective exposure".into(),
                weight: 6,
                check: check(BudgetAspect::Optimal { tolerance: 0.1 }),
                feedback: "A better selection exists within the budget. Compute every channel's effective exposure and solve the 0/1 knapsack exactly (dynamic programming over the budget) instead of picking greedily.".into(),
            },
        ])
        .hints(vec![
            "Marketing keeps a handbook and the data for campaign plans; ask a Marketing colleague where they are.".into(),
            "The densities are printed in the heatmap image for your audience group; read the cell at each channel's grid_i (column) and grid_j (row, counted from the bottom).".into(),
            "Compute each channel's effective exposure with the handbook's formula, solve a 0/1 knapsack within the budget, and report the totals of the channels you selected.".into(),
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

/// "Every candidate listed" answers for the family's answer file: all channels with
/// their true totals, and all channels with the optimum's totals.
pub fn wrong_answers(task: &TaskSpec, _scenario: &Scenario) -> Vec<(String, String)> {
    let Some(b) = task.checkpoints.iter().find_map(|c| match &c.check {
        Check::Domain(d) => match d.as_ref() {
            DomainCheck::Budget(b) => Some(b),
            _ => None,
        },
        _ => None,
    }) else {
        return Vec::new();
    };
    let ids: Vec<&str> = b.items.iter().map(|i| i.0.as_str()).collect();
    let cost: u64 = b.items.iter().map(|i| i.1).sum();
    let value: f64 = b.items.iter().map(|i| i.2).sum();
    vec![
        (
            b.path.clone(),
            json!({"selected_channels": ids, "total_cost": cost, "total_exposure": value})
                .to_string(),
        ),
        (
            b.path.clone(),
            json!({"selected_channels": ids, "total_cost": b.capacity, "total_exposure": b.best})
                .to_string(),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_difficulty_names_are_honoured() {
        assert_eq!(Level::parse("very easy"), Some(Level::VeryEasy));
        assert_eq!(Level::parse("Very Hard"), Some(Level::VeryHard));
        assert_eq!(Level::parse("very_hard"), Some(Level::VeryHard));
        assert_eq!(Level::parse("medium"), Some(Level::Medium));
        assert_eq!(Level::parse("extreme"), None);
        assert_eq!(Level::VeryEasy.preset().channels, 8);
        assert_eq!(Level::VeryHard.preset().size, 18);
    }

    #[test]
    fn cities_accept_the_reference_spellings() {
        assert_eq!(find_city("XiAn").map(|c| c.name), Some("Xi'an"));
        assert_eq!(find_city("shanghai").map(|c| c.name), Some("Shanghai"));
        assert!(find_city("Atlantis").is_none());
    }

    #[test]
    fn exposure_is_exact_and_rounds_half_up() {
        // 1000 * (0.5 + 0.5 * 3/5) * 0.6 = 480.00
        assert_eq!(exposure_cents(1000, 3, 60), 48_000);
        // 1234 * 0.9 * 0.55 = 610.83
        assert_eq!(exposure_cents(1234, 4, 55), 61_083);
        // 1001 * 0.5 * 0.9 = 450.45; 333 * 0.7 * 0.5 = 116.55
        assert_eq!(exposure_cents(1001, 0, 90), 45_045);
        assert_eq!(exposure_cents(333, 2, 50), 11_655);
        // 11 * 0.5 * 0.45 = 2.475 -> 2.48
        assert_eq!(exposure_cents(11, 0, 45), 248);
    }

    #[test]
    fn the_portable_exponential_is_accurate() {
        for t in [0.0, 1e-9, 0.3, 0.69, 1.0, 2.5, 10.0, 40.0, 300.0] {
            let (a, b) = (exp_neg(t), (-t).exp());
            assert!((a - b).abs() <= 1e-12 * b.max(1e-300), "{t}: {a} vs {b}");
        }
        assert_eq!(exp_neg(800.0), 0.0);
    }

    #[test]
    fn heatmaps_span_zero_to_five_around_their_hot_spots() {
        let mut rng = tbsim_core::rng::stream(3, "t");
        for (size, centres) in [(8, 1), (15, 2), (30, 4)] {
            let g = heatmap(&mut rng, size, centres, 0.22 * f64::from(size), (4.0, 10.0));
            assert_eq!(g.len(), size as usize);
            let flat: Vec<u8> = g.iter().flatten().copied().collect();
            assert_eq!(flat.iter().max(), Some(&5));
            assert_eq!(flat.iter().min(), Some(&0));
        }
    }
}
