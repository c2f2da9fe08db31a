//! The learned shortcut probe (issue 37, item 2): the annotation-artifact audit of
//! NLP benchmarks (hypothesis-only baselines), applied to generated tasks.
//!
//! For every scored answer an agent could give by picking one thing it observed,
//! the probe lists every candidate the scan's agent observed ([`candidates`]:
//! figures, dates, IDs, names, lines, clauses, list items), labels each by the
//! real checker (does this candidate in the answer's slot pass the leaf check; for
//! a list, is it one of the listed items), and describes it by generic surface
//! features only. Shallow learners ([`learn`]: logistic regression and a depth-4
//! tree) are trained on some seeds and tested on the others (two folds, by seed
//! parity, so every seed is tested once); each test instance scores a hit when the
//! learner's highest-scored candidate is right. Chance is the share of right
//! candidates in the instance (one in the number of candidates when one is right).
//! The prior is the best constant answer: the candidate text right in the most
//! training instances, tried on the test ones. A list answer is scored as a set
//! ([`sets`]): the probe writes every text its score keeps and hits when the set
//! is exact, as the checkpoint requires.
//!
//! A probe *beats chance* when the lower one-sided 95% Wilson bound of its
//! accuracy exceeds chance by more than [`MARGIN`]. A family passes when no
//! probe, and no prior, of any variant and checkpoint does.

pub mod candidates;
pub mod learn;
pub mod sets;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Value, json};
use tbsim_core::time::Epoch;
use tbsim_scenario::check::{CheckKind, evaluate};
use tbsim_scenario::{Check, LoadedScenario};

use crate::scan::answer::{self, Fill, Kind, Synth};
use crate::scan::observe::Observed;
use candidates::{CandKind, Candidate, FEATURES, KIND_FEATURES, SOURCE_FEATURES};
use learn::{Learner, Z95, top1, wilson};

/// How far above chance a probe's accuracy may be shown to lie (lower 95% bound)
/// before the family fails. See `docs/validity.md` for why five points.
pub const MARGIN: f64 = 0.05;

/// Most features a report names per probe.
const LEANS_SHOWN: usize = 3;

/// Which slot of which checkpoint of which family: the unit a probe is trained on.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct GroupKey {
    /// Task family.
    pub family: String,
    /// Task variant.
    pub variant: String,
    /// Checkpoint key (a follow-up's with its stage suffix, as the scan's rows).
    pub checkpoint: String,
    /// The slot (`/pointer of file`, `message to p`, `file`).
    pub slot: String,
}

/// One instance's candidates for one slot, labelled.
#[derive(Debug, Clone)]
pub struct Group {
    /// The seed it came from.
    pub seed: u64,
    /// Feature rows, one per candidate.
    pub rows: Vec<Vec<f64>>,
    /// Whether each candidate is right.
    pub positive: Vec<bool>,
    /// Each candidate's text (for the prior).
    pub texts: Vec<String>,
    /// For a list slot, the expected items (folded): the group is probed as a set.
    pub want: Option<sets::TextSet>,
}

/// The labelled groups of one instance, by key.
pub type InstanceRows = Vec<(GroupKey, Group)>;

/// The slot as one name over instances: its pointer, or what it is (file names and
/// recipients vary with the instance, which would split a key into one per draw).
fn slot_name(s: &answer::Slot) -> String {
    let target = match &s.target {
        answer::Target::File(_) => "file",
        answer::Target::Message(_) => "message",
        answer::Target::Calendar => "calendar",
    };
    match &s.pointer {
        Some(p) => format!("{p} of the {target}"),
        None => format!("the {target}"),
    }
}

fn fold(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Which candidate kinds may fill a slot of `kind`.
fn fits(slot: Kind, c: CandKind) -> bool {
    match slot {
        Kind::Number => c == CandKind::Figure,
        Kind::List => matches!(c, CandKind::Id | CandKind::Name | CandKind::ListItem),
        Kind::Text => true,
        _ => false,
    }
}

/// The labelled candidate groups of one observed instance: every slot of every
/// scored answer checkpoint of every released task that one observed thing could
/// fill (a number, a text, a list's items). Slots read together with another
/// (a selection and its cost) and records, plans and bookings are left out: no
/// single candidate answers them.
pub fn instance_rows(
    loaded: &LoadedScenario,
    seen: &Observed,
    seed: u64,
    first_task: &str,
) -> InstanceRows {
    let epoch = Epoch::from_timestamp(&loaded.scenario.clock.start).ok();
    let cands: Vec<Candidate> = candidates::candidates(seen);
    let released: BTreeSet<&str> = seen.tasks.iter().map(|t| t.0.as_str()).collect();
    let mut out = Vec::new();
    for t in &loaded.scenario.tasks {
        if !released.contains(t.key.as_str()) {
            continue;
        }
        let stage = if first_task.is_empty() {
            ""
        } else {
            t.key.strip_prefix(first_task).unwrap_or("")
        };
        for cp in &t.checkpoints {
            if cp.check.kind() != CheckKind::Answer || cp.weight == 0 {
                continue;
            }
            for leaf in answer::shape(&cp.check) {
                let [slot] = leaf.slots.as_slice() else {
                    continue;
                };
                let mut want_set = None;
                let label: Box<dyn Fn(&Candidate) -> bool> = match (slot.kind, &leaf.check) {
                    (Kind::List, Check::JsonStringSet { expected, .. }) => {
                        let want: BTreeSet<String> = expected.iter().map(|s| fold(s)).collect();
                        want_set = Some(want.clone());
                        Box::new(move |c: &Candidate| want.contains(&fold(&c.text)))
                    }
                    (Kind::List, _) => continue,
                    (Kind::Number, check) => {
                        let check = check.clone();
                        let slot = slot.clone();
                        Box::new(move |c: &Candidate| {
                            let fill = Fill::Json(json!(c.value.unwrap_or(f64::NAN)));
                            evaluate(&check, &Synth::new(&[(&slot, &fill)], epoch))
                        })
                    }
                    (Kind::Text, check) => {
                        let check = check.clone();
                        let slot = slot.clone();
                        Box::new(move |c: &Candidate| {
                            let fill = if slot.pointer.is_some() {
                                Fill::Json(Value::String(c.text.clone()))
                            } else {
                                Fill::Text(c.text.clone())
                            };
                            evaluate(&check, &Synth::new(&[(&slot, &fill)], epoch))
                        })
                    }
                    _ => continue,
                };
                let mut g = Group {
                    seed,
                    rows: Vec::new(),
                    positive: Vec::new(),
                    texts: Vec::new(),
                    want: want_set,
                };
                for c in cands.iter().filter(|c| fits(slot.kind, c.kind)) {
                    g.positive.push(label(c));
                    g.rows.push(c.features.clone());
                    g.texts.push(c.text.clone());
                }
                out.push((
                    GroupKey {
                        family: t.family.clone(),
                        variant: t.variant.clone(),
                        checkpoint: format!(
                            "{}{}",
                            cp.key,
                            if stage.is_empty() {
                                String::new()
                            } else {
                                format!(" ({stage})")
                            }
                        ),
                        slot: slot_name(slot),
                    },
                    g,
                ));
            }
        }
    }
    out
}

/// One learner's (or the prior's) result on one key.
#[derive(Debug, Clone, Default)]
pub struct Score {
    /// Test instances (with at least one right candidate).
    pub n: usize,
    /// Expected hits.
    pub hits: f64,
    /// Summed chance.
    pub chance: f64,
    /// The features the models lean on (both folds' weights summed), most first.
    pub leans_on: Vec<(String, f64)>,
}

impl Score {
    /// Accuracy.
    pub fn accuracy(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.hits / self.n as f64
        }
    }
    /// Mean chance.
    pub fn chance(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.chance / self.n as f64
        }
    }
    /// The lower one-sided 95% bound of the accuracy.
    pub fn lower(&self) -> f64 {
        wilson(self.hits, self.n as f64, Z95).0
    }
    /// Whether it beats chance by more than [`MARGIN`] at 95% confidence.
    pub fn beats_chance(&self) -> bool {
        self.n > 0 && self.lower() > self.chance() + MARGIN
    }
}

/// The probe's result on one key.
#[derive(Debug, Clone, Default)]
pub struct KeyResult {
    /// Instances seen.
    pub instances: usize,
    /// Of those, instances where no observed candidate is right (the answer must be
    /// worked out, not picked).
    pub not_pickable: usize,
    /// Mean candidates per instance.
    pub mean_candidates: f64,
    /// Per learner.
    pub learners: BTreeMap<Learner, Score>,
    /// The best constant answer learnt on the other fold.
    pub prior: Score,
}

impl KeyResult {
    /// Whether any probe (or the prior) beats chance.
    pub fn fails(&self) -> bool {
        self.prior.beats_chance() || self.learners.values().any(Score::beats_chance)
    }
    /// The probe with the highest accuracy (the prior included).
    pub fn best(&self) -> (&str, &Score) {
        let mut best = ("prior", &self.prior);
        for (l, s) in &self.learners {
            if s.accuracy() - s.chance() > best.1.accuracy() - best.1.chance() {
                best = (l.name(), s);
            }
        }
        best
    }
}

/// A candidate's type: the kind of source it was first seen in, what it is (a
/// figure, an ID, a name, ...), read back from its one-hot features, and for an
/// ID its format (digits as `9`: `SKU-9999`, `TX-9999`), which names the register
/// it comes from.
type CandType = (usize, usize, String);

fn cand_type(row: &[f64], text: &str) -> CandType {
    let one = |r: std::ops::Range<usize>| {
        r.clone()
            .find(|&i| row.get(i).is_some_and(|v| *v > 0.5))
            .map_or(usize::MAX, |i| i - r.start)
    };
    let kind = one(KIND_FEATURES);
    let format = if kind == CandKind::Id as usize {
        text.chars()
            .map(|c| if c.is_ascii_digit() { '9' } else { c })
            .collect()
    } else {
        String::new()
    };
    (one(SOURCE_FEATURES), kind, format)
}

/// The type whose candidates were right most often in training (ties: the type
/// seen more, then the first): what a policy that knows the workflow (the answer
/// is a SKU of the stock sheet, a figure of a reply) but reads nothing would pick
/// among.
fn best_type(train: &[&&Group]) -> Option<CandType> {
    let mut by: BTreeMap<CandType, (usize, usize)> = BTreeMap::new();
    for g in train {
        for ((row, p), text) in g.rows.iter().zip(&g.positive).zip(&g.texts) {
            let e = by.entry(cand_type(row, text)).or_default();
            e.0 += usize::from(*p);
            e.1 += 1;
        }
    }
    by.into_iter()
        .filter(|(_, (right, _))| *right > 0)
        .max_by(|a, b| {
            let (ra, na) = a.1;
            let (rb, nb) = b.1;
            (ra * nb)
                .cmp(&(rb * na))
                .then(na.cmp(&nb))
                .then(b.0.cmp(&a.0))
        })
        .map(|(t, _)| t)
}

/// The chance a test instance gives a reader-less pick: the better of a blind
/// pick among all its candidates and one among the candidates of the type
/// learnt in training. Knowing which kind of thing the answer is, is workflow
/// knowledge, not a shortcut (issue 37: a list of SKUs is not beaten by "pick
/// an ID").
fn baseline(g: &Group, typed: Option<&CandType>) -> f64 {
    let share = |keep: &dyn Fn(&Vec<f64>, &str) -> bool| {
        let (mut right, mut n) = (0usize, 0usize);
        for ((row, p), text) in g.rows.iter().zip(&g.positive).zip(&g.texts) {
            if keep(row, text) {
                right += usize::from(*p);
                n += 1;
            }
        }
        (n > 0).then(|| right as f64 / n as f64)
    };
    let all = share(&|_, _| true).unwrap_or(0.0);
    let of_type = typed
        .and_then(|t| share(&|row, text| cand_type(row, text) == *t))
        .unwrap_or(0.0);
    all.max(of_type)
}

/// A list group's candidate texts, folded as its expected items are.
fn folded(g: &Group) -> Vec<String> {
    g.texts.iter().map(|t| fold(t)).collect()
}

/// Whether a test instance can be answered from what was observed: one right
/// candidate, or for a set, every expected item among the candidates.
fn pickable(g: &Group) -> bool {
    match &g.want {
        Some(want) => {
            let have: BTreeSet<String> = folded(g).into_iter().collect();
            !want.is_empty() && want.is_subset(&have)
        }
        None => g.positive.contains(&true),
    }
}

/// Trains and tests every learner on one key's groups (two folds by seed parity).
pub fn evaluate_key(groups: &[&Group]) -> KeyResult {
    let mut r = KeyResult {
        instances: groups.len(),
        ..KeyResult::default()
    };
    r.not_pickable = groups.iter().filter(|g| !pickable(g)).count();
    r.mean_candidates = if groups.is_empty() {
        0.0
    } else {
        groups.iter().map(|g| g.rows.len()).sum::<usize>() as f64 / groups.len() as f64
    };
    for fold in 0..2u64 {
        let (train, test): (Vec<&&Group>, Vec<&&Group>) =
            groups.iter().partition(|g| g.seed % 2 != fold);
        let test: Vec<&&Group> = test.into_iter().filter(|g| pickable(g)).collect();
        if test.is_empty() {
            continue;
        }
        let typed = best_type(&train);
        // Chance per test instance: a blind pick, or for a set a blind writer.
        let chance_of = |g: &Group| match &g.want {
            Some(want) => {
                let texts = folded(g);
                let all = sets::texts(&texts, |_| true);
                let of_type = typed
                    .as_ref()
                    .map(|t| sets::texts(&texts, |i| cand_type(&g.rows[i], &g.texts[i]) == *t));
                sets::chance(&all, of_type.as_ref(), want)
            }
            None => baseline(g, typed.as_ref()),
        };
        // The prior: the candidate text right in the most training instances, or
        // for a set, the set expected in the most.
        let prior_hit: Box<dyn Fn(&Group) -> bool> = if test[0].want.is_some() {
            let mut sets_seen: BTreeMap<&sets::TextSet, usize> = BTreeMap::new();
            for g in &train {
                if let Some(w) = &g.want {
                    *sets_seen.entry(w).or_default() += 1;
                }
            }
            let constant = sets_seen
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(t, _)| (*t).clone());
            Box::new(move |g: &Group| constant.is_some() && g.want == constant)
        } else {
            let mut right: BTreeMap<&str, usize> = BTreeMap::new();
            for g in &train {
                let mut mine: BTreeSet<&str> = BTreeSet::new();
                for (t, p) in g.texts.iter().zip(&g.positive) {
                    if *p {
                        mine.insert(t);
                    }
                }
                for t in mine {
                    *right.entry(t).or_default() += 1;
                }
            }
            let constant = right
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(t, _)| (*t).to_owned());
            Box::new(move |g: &Group| {
                constant
                    .as_ref()
                    .is_some_and(|c| g.texts.iter().zip(&g.positive).any(|(t, p)| *p && t == c))
            })
        };
        for g in &test {
            r.prior.n += 1;
            r.prior.chance += chance_of(g);
            r.prior.hits += f64::from(u8::from(prior_hit(g)));
        }
        let rows: Vec<Vec<f64>> = train.iter().flat_map(|g| g.rows.iter().cloned()).collect();
        let labels: Vec<bool> = train
            .iter()
            .flat_map(|g| g.positive.iter().copied())
            .collect();
        for l in Learner::ALL {
            let s = r.learners.entry(l).or_default();
            let model = learn::train(l, &rows, &labels, 37 + fold);
            // A set is written by a threshold on the learnt score: the one that
            // makes the most training sets exact.
            let tau = model.as_ref().and_then(|m| {
                let intervals: Vec<(f64, f64)> = train
                    .iter()
                    .filter_map(|g| {
                        let want = g.want.as_ref()?;
                        sets::exact_interval(&sets::by_text(&folded(g), &m.score(&g.rows)), want)
                    })
                    .collect();
                sets::best_threshold(&intervals)
            });
            for g in &test {
                let chance = chance_of(g);
                s.n += 1;
                s.chance += chance;
                // No model (one class in training): a blind pick, chance itself.
                s.hits += match (&model, &g.want) {
                    (Some(m), Some(want)) => f64::from(u8::from(tau.is_some_and(|tau| {
                        sets::exact_at(&sets::by_text(&folded(g), &m.score(&g.rows)), want, tau)
                    }))),
                    (Some(m), None) => top1(&m.score(&g.rows), &g.positive),
                    (None, _) => chance,
                };
            }
            if let Some(m) = &model {
                for (i, w) in &m.leans_on {
                    let name = FEATURES[*i].to_owned();
                    match s.leans_on.iter_mut().find(|x| x.0 == name) {
                        Some(x) => x.1 += w,
                        None => s.leans_on.push((name, *w)),
                    }
                }
            }
        }
    }
    for s in r.learners.values_mut() {
        s.leans_on
            .sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    }
    r
}

/// Every key's result, from every instance's rows.
#[derive(Debug, Default)]
pub struct ProbeReport {
    /// By key.
    pub keys: BTreeMap<GroupKey, KeyResult>,
}

impl ProbeReport {
    /// Trains and tests the probe on every key of `instances`.
    pub fn build(instances: &[InstanceRows]) -> ProbeReport {
        let mut by: BTreeMap<&GroupKey, Vec<&Group>> = BTreeMap::new();
        for inst in instances {
            for (k, g) in inst {
                by.entry(k).or_default().push(g);
            }
        }
        ProbeReport {
            keys: by
                .into_iter()
                .map(|(k, gs)| (k.clone(), evaluate_key(&gs)))
                .collect(),
        }
    }

    /// Keys where a probe beats chance.
    pub fn failing(&self) -> Vec<(&GroupKey, &KeyResult)> {
        self.keys.iter().filter(|(_, r)| r.fails()).collect()
    }

    /// The Markdown table: one row per key.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "| variant | checkpoint | slot | instances | not pickable | candidates | chance | prior | logistic (lower 95%) | tree (lower 95%) | beats chance | leans on |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|\n",
        );
        for (k, r) in &self.keys {
            let lg = |l: Learner| {
                r.learners.get(&l).map_or("-".to_owned(), |x| {
                    format!("{:.3} ({:.3})", x.accuracy(), x.lower())
                })
            };
            let (best, bs) = r.best();
            let leans: Vec<String> = bs
                .leans_on
                .iter()
                .take(LEANS_SHOWN)
                .map(|(n, _)| n.clone())
                .collect();
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {:.1} | {:.3} | {:.3} | {} | {} | {} | {} |",
                k.variant,
                k.checkpoint,
                k.slot.replace('|', "\\|"),
                r.instances,
                r.not_pickable,
                r.mean_candidates,
                r.prior.chance(),
                r.prior.accuracy(),
                lg(Learner::Logistic),
                lg(Learner::Tree),
                if r.fails() {
                    format!("**yes** ({best})")
                } else {
                    String::new()
                },
                if best == "prior" {
                    "(constant answer)".to_owned()
                } else {
                    leans.join("; ")
                }
            );
        }
        s
    }

    /// The JSON record: every key with every probe's figures and leanings.
    pub fn json(&self) -> Value {
        let rows: Vec<Value> = self
            .keys
            .iter()
            .map(|(k, r)| {
                let score = |s: &Score| {
                    json!({
                        "n": s.n,
                        "accuracy": round(s.accuracy()),
                        "lower95": round(s.lower()),
                        "chance": round(s.chance()),
                        "beats_chance": s.beats_chance(),
                        "leans_on": s.leans_on.iter().take(6).map(|(n, w)| json!({"feature": n, "weight": round(*w)})).collect::<Vec<_>>(),
                    })
                };
                let learners: serde_json::Map<String, Value> = r
                    .learners
                    .iter()
                    .map(|(l, s)| (l.name().to_owned(), score(s)))
                    .collect();
                json!({
                    "family": k.family,
                    "variant": k.variant,
                    "checkpoint": k.checkpoint,
                    "slot": k.slot,
                    "instances": r.instances,
                    "not_pickable": r.not_pickable,
                    "mean_candidates": round(r.mean_candidates),
                    "prior": score(&r.prior),
                    "learners": learners,
                    "fails": r.fails(),
                })
            })
            .collect();
        json!({ "margin": MARGIN, "keys": rows })
    }
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed scramble (splitmix64's finaliser), for noise no learner can use.
    fn mix(mut x: u64) -> u64 {
        x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        x ^ (x >> 31)
    }

    fn group(seed: u64, answer_at: usize, n: usize, cue: bool) -> Group {
        let mut g = Group {
            seed,
            rows: Vec::new(),
            positive: Vec::new(),
            texts: Vec::new(),
            want: None,
        };
        // Feature 29 is noise; feature 31 marks the answer when `cue` is on.
        for i in 0..n {
            let right = i == answer_at;
            let mut row = vec![0.0; FEATURES.len()];
            row[29] = (mix(seed * 1000 + i as u64) % 5) as f64;
            row[31] = f64::from(cue && right);
            g.rows.push(row);
            g.positive.push(right);
            g.texts
                .push(format!("c{}", mix(seed * 77 + i as u64) % 1000));
        }
        g
    }

    #[test]
    fn a_cue_beats_chance_and_noise_does_not() {
        let cued: Vec<Group> = (0..200)
            .map(|s| group(s, (mix(s) % 10) as usize, 10, true))
            .collect();
        let r = evaluate_key(&cued.iter().collect::<Vec<_>>());
        assert!(r.fails());
        let lg = &r.learners[&Learner::Logistic];
        assert!(lg.accuracy() > 0.9, "{}", lg.accuracy());
        assert!((lg.chance() - 0.1).abs() < 1e-9);
        assert_eq!(lg.leans_on[0].0, FEATURES[31]);
        let blind: Vec<Group> = (0..200)
            .map(|s| group(s, (mix(s) % 10) as usize, 10, false))
            .collect();
        let r = evaluate_key(&blind.iter().collect::<Vec<_>>());
        assert!(!r.fails(), "{:?}", r);
    }

    /// A list slot whose right items are half the IDs of a sheet, drawn at
    /// random, beside names that are never right: writing the sheet's IDs is
    /// knowing the workflow and gives the set only by chance; a cue on the right
    /// IDs makes it exact, and the set probe finds it. `whole`: every SKU is
    /// right, so writing every ID of the learnt type is the answer (chance 1).
    fn sheet(seed: u64, cue: bool, whole: bool) -> Group {
        let mut g = Group {
            seed,
            rows: Vec::new(),
            positive: Vec::new(),
            texts: Vec::new(),
            want: Some(BTreeSet::new()),
        };
        // Eight SKUs, four purchase orders (IDs of another format, in the same
        // file, never right) and four names.
        for i in 0..16u64 {
            let (sku, po) = (i < 8, (8..12).contains(&i));
            let right = sku && (whole || mix(seed * 131 + i).is_multiple_of(2));
            let text = if sku {
                format!("SKU-{}", 1000 + mix(seed * 3 + i) % 9000)
            } else if po {
                format!("PO-{}", 10 + mix(seed * 3 + i) % 90)
            } else {
                format!("Dana {}", mix(seed * 3 + i) % 10_000)
            };
            let mut row = vec![0.0; FEATURES.len()];
            row[SOURCE_FEATURES.start] = 1.0;
            row[KIND_FEATURES.start + if sku || po { 2 } else { 3 }] = 1.0;
            row[29] = (mix(seed * 17 + i) % 9) as f64;
            row[31] = f64::from(cue && right);
            // The length tells a SKU from a purchase order, not one SKU from another.
            let length = FEATURES
                .iter()
                .position(|f| *f == "length in characters (log)")
                .unwrap();
            row[length] = (text.len() as f64).ln();
            if right && let Some(w) = g.want.as_mut() {
                w.insert(fold(&text));
            }
            g.rows.push(row);
            g.positive.push(right);
            g.texts.push(text);
        }
        g
    }

    #[test]
    fn a_set_is_found_by_a_cue_not_by_knowing_its_kind() {
        let blind: Vec<Group> = (0..200).map(|s| sheet(s, false, false)).collect();
        let r = evaluate_key(&blind.iter().collect::<Vec<_>>());
        let lg = &r.learners[&Learner::Logistic];
        assert!(lg.chance() < 0.01, "{}", lg.chance());
        assert!(!r.fails(), "{r:?}");
        let cued: Vec<Group> = (0..200).map(|s| sheet(s, true, false)).collect();
        let r = evaluate_key(&cued.iter().collect::<Vec<_>>());
        assert!(r.fails(), "{r:?}");
        // Exact sets, not members: the cued probe writes the whole set.
        assert!(r.learners[&Learner::Logistic].accuracy() > 0.9, "{r:?}");
    }

    #[test]
    fn a_set_that_is_every_item_of_its_kind_is_workflow_not_a_shortcut() {
        let whole: Vec<Group> = (0..200).map(|s| sheet(s, false, true)).collect();
        let r = evaluate_key(&whole.iter().collect::<Vec<_>>());
        assert!(
            (r.learners[&Learner::Logistic].chance() - 1.0).abs() < 1e-9,
            "{r:?}"
        );
        assert!(!r.fails(), "{r:?}");
    }

    /// Meeting notes holding `k` figures drawn alike, one of them the answer: at
    /// the largest when `leak`, anywhere otherwise; a figure-free file beside them.
    fn meeting(seed: u64, leak: bool) -> (Observed, f64) {
        let k = 6;
        let mut figs: Vec<u64> = (0..k).map(|i| 200 + mix(seed * 31 + i) % 800).collect();
        figs.sort_unstable();
        figs.dedup();
        let at = if leak {
            figs.len() - 1
        } else {
            (mix(seed ^ 0xabc) % figs.len() as u64) as usize
        };
        let answer = figs[at] as f64;
        // Shuffle the order they are stated in, so position carries nothing.
        let mut order: Vec<usize> = (0..figs.len()).collect();
        order.sort_by_key(|&i| mix(seed * 7 + i as u64));
        let lines: Vec<String> = order
            .iter()
            .map(|&i| {
                format!(
                    "Request {}: {} EUR for the team.",
                    (b'A' + i as u8) as char,
                    figs[i]
                )
            })
            .collect();
        let seen = Observed {
            meetings: vec![("Budget".into(), lines.join("\n"))],
            files: BTreeMap::from([("drive/readme.md".into(), "Notes for the team.".into())]),
            tasks: vec![(
                "task/t".into(),
                "Record the approved request.".into(),
                "X".into(),
            )],
            ..Observed::default()
        };
        (seen, answer)
    }

    fn meeting_groups(leak: bool) -> Vec<Group> {
        (0..160)
            .map(|seed| {
                let (seen, answer) = meeting(seed, leak);
                let mut g = Group {
                    seed,
                    rows: Vec::new(),
                    positive: Vec::new(),
                    texts: Vec::new(),
                    want: None,
                };
                for c in candidates::candidates(&seen)
                    .into_iter()
                    .filter(|c| c.kind == CandKind::Figure)
                {
                    g.positive.push(c.value == Some(answer));
                    g.rows.push(c.features);
                    g.texts.push(c.text);
                }
                g
            })
            .collect()
    }

    #[test]
    fn the_probe_learns_an_order_statistic_from_real_candidates() {
        let leak = meeting_groups(true);
        let r = evaluate_key(&leak.iter().collect::<Vec<_>>());
        assert!(r.fails(), "{r:?}");
        let (best, s) = r.best();
        assert_ne!(best, "prior");
        assert!(s.accuracy() > 0.9, "{}", s.accuracy());
        assert!(
            s.leans_on
                .iter()
                .take(2)
                .any(|f| f.0.contains("largest") || f.0.contains("rank")),
            "{:?}",
            s.leans_on
        );
        // The same figures with the answer anywhere: nothing to learn.
        let clean = meeting_groups(false);
        let r = evaluate_key(&clean.iter().collect::<Vec<_>>());
        assert!(!r.fails(), "{r:?}");
    }

    #[test]
    fn a_constant_answer_is_caught_by_the_prior() {
        let mut gs: Vec<Group> = (0..100)
            .map(|s| group(s, (mix(s) % 10) as usize, 10, false))
            .collect();
        for g in &mut gs {
            // The right candidate's text is always the same.
            let at = g.positive.iter().position(|&p| p).unwrap();
            g.texts[at] = "always".into();
        }
        let r = evaluate_key(&gs.iter().collect::<Vec<_>>());
        assert_eq!(r.prior.accuracy(), 1.0);
        assert!(r.fails());
        assert_eq!(r.best().0, "prior");
    }
}
