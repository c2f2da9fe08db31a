//! The shallow learners of the probe (smartcore's logistic regression and
//! decision tree) and the confidence bound it is judged by.
//!
//! Both score candidates; the probe picks each instance's highest-scored one.
//! Features are standardised on the training rows (logistic regression's solver
//! and penalty need one scale); the tree is seeded, so a probe is the same bytes
//! on every run.

use smartcore::linalg::basic::arrays::Array;
use smartcore::linalg::basic::matrix::DenseMatrix;
use smartcore::linear::logistic_regression::{LogisticRegression, LogisticRegressionParameters};
use smartcore::tree::decision_tree_classifier::{
    DecisionTreeClassifier, DecisionTreeClassifierParameters,
};

/// Depth of the decision tree: shallow, as a cue an agent picks up is a short rule.
pub const TREE_DEPTH: u16 = 4;
/// Fewest training rows in a tree's leaf (a rule must hold over several seeds).
pub const TREE_MIN_LEAF: usize = 5;
/// Logistic regression's L2 penalty (on standardised features).
pub const LOGISTIC_ALPHA: f64 = 1.0;

/// A learner the probe trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Learner {
    /// Logistic regression.
    Logistic,
    /// A depth-limited decision tree.
    Tree,
}

impl Learner {
    /// Every learner, in report order.
    pub const ALL: [Learner; 2] = [Learner::Logistic, Learner::Tree];

    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Learner::Logistic => "logistic",
            Learner::Tree => "tree",
        }
    }
}

/// A trained scorer, and which features it leans on (index, weight), most first.
#[derive(Debug)]
pub struct Model {
    mean: Vec<f64>,
    scale: Vec<f64>,
    kind: Fitted,
    /// Features by weight: |coefficient| for the logistic model, importance for the tree.
    pub leans_on: Vec<(usize, f64)>,
}

#[derive(Debug)]
enum Fitted {
    Logistic {
        w: Vec<f64>,
        b: f64,
    },
    Tree(
        Box<DecisionTreeClassifier<f64, u32, DenseMatrix<f64>, Vec<u32>>>,
        usize,
    ),
}

fn standardiser(rows: &[Vec<f64>]) -> (Vec<f64>, Vec<f64>) {
    let d = rows.first().map_or(0, Vec::len);
    let n = rows.len().max(1) as f64;
    let mut mean = vec![0.0; d];
    for r in rows {
        for (m, x) in mean.iter_mut().zip(r) {
            *m += x / n;
        }
    }
    let mut var = vec![0.0; d];
    for r in rows {
        for ((v, x), m) in var.iter_mut().zip(r).zip(&mean) {
            *v += (x - m) * (x - m) / n;
        }
    }
    // A constant feature keeps scale 1 (it is all zeros once centred).
    let scale = var
        .into_iter()
        .map(|v| if v > 1e-12 { v.sqrt() } else { 1.0 })
        .collect();
    (mean, scale)
}

fn apply(rows: &[Vec<f64>], mean: &[f64], scale: &[f64]) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(mean)
                .zip(scale)
                .map(|((x, m), s)| (x - m) / s)
                .collect()
        })
        .collect()
}

/// Trains `learner` on `rows` labelled `labels`; none when the rows hold one class
/// only or the solver fails.
pub fn train(learner: Learner, rows: &[Vec<f64>], labels: &[bool], seed: u64) -> Option<Model> {
    if rows.is_empty() || labels.iter().all(|&l| l) || labels.iter().all(|&l| !l) {
        return None;
    }
    let (mean, scale) = standardiser(rows);
    let x = DenseMatrix::from_2d_vec(&apply(rows, &mean, &scale)).ok()?;
    let y: Vec<u32> = labels.iter().map(|&l| u32::from(l)).collect();
    let d = mean.len();
    let (kind, mut leans_on) = match learner {
        Learner::Logistic => {
            let m = LogisticRegression::fit(
                &x,
                &y,
                LogisticRegressionParameters::default().with_alpha(LOGISTIC_ALPHA),
            )
            .ok()?;
            // Classes are sorted: the model's weights give the odds of class 1.
            let w: Vec<f64> = (0..d).map(|j| *m.coefficients().get((0, j))).collect();
            let b = *m.intercept().get((0, 0));
            let lean: Vec<(usize, f64)> = w.iter().map(|x| x.abs()).enumerate().collect();
            (Fitted::Logistic { w, b }, lean)
        }
        Learner::Tree => {
            let mut p = DecisionTreeClassifierParameters::default()
                .with_max_depth(TREE_DEPTH)
                .with_min_samples_leaf(TREE_MIN_LEAF);
            p.seed = Some(seed);
            let m = DecisionTreeClassifier::fit(&x, &y, p).ok()?;
            let imp = m.compute_feature_importances(false);
            // Both classes are present and smartcore sorts them: class 1 is column 1.
            let positive = 1;
            let lean: Vec<(usize, f64)> = imp.into_iter().enumerate().collect();
            (Fitted::Tree(Box::new(m), positive), lean)
        }
    };
    leans_on.retain(|(_, w)| *w > 1e-9);
    leans_on.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Some(Model {
        mean,
        scale,
        kind,
        leans_on,
    })
}

impl Model {
    /// Scores of `rows` (higher: likelier the answer).
    pub fn score(&self, rows: &[Vec<f64>]) -> Vec<f64> {
        if rows.is_empty() {
            return Vec::new();
        }
        let z = apply(rows, &self.mean, &self.scale);
        match &self.kind {
            Fitted::Logistic { w, b } => z
                .iter()
                .map(|r| r.iter().zip(w).map(|(x, w)| x * w).sum::<f64>() + b)
                .collect(),
            Fitted::Tree(m, positive) => {
                let Ok(x) = DenseMatrix::from_2d_vec(&z) else {
                    return vec![0.0; rows.len()];
                };
                match m.predict_proba(&x) {
                    Ok(p) => (0..rows.len()).map(|i| *p.get((i, *positive))).collect(),
                    Err(_) => vec![0.0; rows.len()],
                }
            }
        }
    }
}

/// The expected top-1 hit of `scores` over candidates labelled `positive`: the
/// share of positives among the highest-scored candidates (ties split evenly, so a
/// scorer that cannot tell candidates apart scores exactly chance).
pub fn top1(scores: &[f64], positive: &[bool]) -> f64 {
    let Some(best) = scores.iter().copied().max_by(f64::total_cmp) else {
        return 0.0;
    };
    let top: Vec<usize> = (0..scores.len())
        .filter(|&i| (scores[i] - best).abs() <= 1e-9 * best.abs().max(1.0))
        .collect();
    top.iter().filter(|&&i| positive[i]).count() as f64 / top.len() as f64
}

/// z for a one-sided 95% bound.
pub const Z95: f64 = 1.644_853_626_951_472_2;

/// Wilson score bounds (lower, upper) of a proportion `hits / n` at `z`.
pub fn wilson(hits: f64, n: f64, z: f64) -> (f64, f64) {
    if n <= 0.0 {
        return (0.0, 1.0);
    }
    let p = (hits / n).clamp(0.0, 1.0);
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let den = 1.0 + z2 / n;
    (
        ((centre - half) / den).max(0.0),
        ((centre + half) / den).min(1.0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows where feature 1 marks the answer and feature 0 is noise.
    fn toy() -> (Vec<Vec<f64>>, Vec<bool>) {
        let mut rows = Vec::new();
        let mut labels = Vec::new();
        for i in 0..200u32 {
            let pos = i % 10 == 3;
            rows.push(vec![
                f64::from(i % 7),
                f64::from(pos) + f64::from(i % 3) * 0.01,
            ]);
            labels.push(pos);
        }
        (rows, labels)
    }

    #[test]
    fn both_learners_rank_the_marked_candidate_first_and_lean_on_its_feature() {
        let (rows, labels) = toy();
        for l in Learner::ALL {
            let m = train(l, &rows, &labels, 7).unwrap();
            assert_eq!(
                m.leans_on[0].0,
                1,
                "{} leans on the marking feature",
                l.name()
            );
            let s = m.score(&rows[0..10]);
            assert_eq!(top1(&s, &labels[0..10]), 1.0, "{}", l.name());
            // The same inputs give the same model.
            let again = train(l, &rows, &labels, 7).unwrap().score(&rows[0..10]);
            assert_eq!(s, again);
        }
    }

    #[test]
    fn one_class_trains_nothing() {
        let rows = vec![vec![1.0], vec![2.0]];
        assert!(train(Learner::Logistic, &rows, &[false, false], 1).is_none());
        assert!(train(Learner::Tree, &rows, &[true, true], 1).is_none());
    }

    #[test]
    fn ties_split_the_hit_and_a_blind_scorer_scores_chance() {
        assert_eq!(
            top1(&[1.0, 1.0, 0.0, 1.0], &[true, false, false, false]),
            1.0 / 3.0
        );
        assert_eq!(top1(&[0.0; 4], &[true, false, false, false]), 0.25);
        assert_eq!(top1(&[0.2, 0.9], &[true, false]), 0.0);
    }

    #[test]
    fn wilson_bounds_bracket_the_proportion() {
        let (lo, hi) = wilson(10.0, 100.0, Z95);
        assert!(lo < 0.1 && hi > 0.1);
        assert!((lo - 0.0604).abs() < 0.002, "{lo}");
        assert!((hi - 0.1605).abs() < 0.002, "{hi}");
        assert_eq!(wilson(0.0, 0.0, Z95), (0.0, 1.0));
        let (lo, _) = wilson(0.0, 50.0, Z95);
        assert_eq!(lo, 0.0);
    }
}
