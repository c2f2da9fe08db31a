//! Worlds of runs kept between requests, so the world at any step answers fast.
//!
//! A fresh replay of a long run to its last step costs a second or more; the page
//! asks for the world on every scrub. So each run's directory is read once (a
//! [`Replayer`]) and a few worlds re-driven from it are kept ([`CURSORS_PER_RUN`]),
//! each advanced from where it stands to the next step asked: a later step costs
//! only the decisions in between; an earlier one starts a fresh world. Rendered
//! views are kept too ([`VIEWS_PER_RUN`]), and only the [`RUNS_KEPT`] runs looked
//! at last keep anything, so memory stays bounded.
//!
//! What is answered is what a fresh replay answers ([`tbsim_engine::inspect::world_at`],
//! [`tbsim_engine::inspect::file_at`]): the same recorded decisions applied in the
//! same order to a world built the same way (the tests check it, step by step).
//! A run that moves on (its trajectory grows: a live run) is read again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use tbsim_engine::inspect::{file_bytes, settle_sim, world_view};
use tbsim_engine::replay::{ReplayCursor, ReplayError, Replayer};

/// Worlds kept per run (each a whole simulation).
pub const CURSORS_PER_RUN: usize = 3;
/// Runs whose worlds are kept.
pub const RUNS_KEPT: usize = 4;
/// Rendered world views kept per run.
pub const VIEWS_PER_RUN: usize = 48;

/// What a run directory's content is known by: its trajectory's length and time
/// of change (a run still being written grows).
type Key = (u64, Option<SystemTime>);

fn key_of(dir: &Path) -> Key {
    std::fs::metadata(dir.join("trajectory.jsonl"))
        .map(|m| (m.len(), m.modified().ok()))
        .unwrap_or((0, None))
}

/// A run's figures after its last complete decision, as the unsettled world shows
/// them (what a recorded run's detail needs).
#[derive(Debug, Clone)]
pub struct EndFacts {
    /// The world's progress.
    pub progress: tbsim_engine::progress::Progress,
    /// Complete decisions recorded.
    pub steps: u64,
    /// Per released task: hint tiers given and available.
    pub hint_tiers: BTreeMap<String, (u8, u8)>,
}

/// One run's replayer, its worlds and its rendered views.
struct RunWorlds {
    key: Key,
    replayer: Replayer,
    /// Worlds not settled, each with when it was last used.
    cursors: Vec<(ReplayCursor, u64)>,
    /// JSON of the world after a step, with or without answers.
    views: BTreeMap<(u64, bool), (Arc<str>, u64)>,
    end: Option<EndFacts>,
}

impl RunWorlds {
    /// A world after decision `to` (clamped to the run's): the kept world nearest
    /// before it, advanced; a fresh one when none is (the least used dropped).
    /// Returns its index in `cursors`.
    fn cursor_at(&mut self, to: u64, now: u64) -> Result<usize, ReplayError> {
        let to = to.min(self.replayer.steps);
        let best = self
            .cursors
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| c.at() <= to)
            .max_by_key(|(_, (c, _))| c.at())
            .map(|(i, _)| i);
        let i = match best {
            Some(i) => i,
            None => {
                if self.cursors.len() >= CURSORS_PER_RUN
                    && let Some(old) = (0..self.cursors.len()).min_by_key(|i| self.cursors[*i].1)
                {
                    self.cursors.swap_remove(old);
                }
                self.cursors.push((self.replayer.cursor(), now));
                self.cursors.len() - 1
            }
        };
        let (c, used) = &mut self.cursors[i];
        *used = now;
        self.replayer.advance(c, to)?;
        Ok(i)
    }

    fn end_facts_of(replayer: &Replayer, c: &ReplayCursor) -> EndFacts {
        EndFacts {
            progress: c.sim().progress(),
            steps: replayer.steps,
            hint_tiers: c.sim().hint_tiers(),
        }
    }

    fn end_facts(&mut self, now: u64) -> Result<EndFacts, ReplayError> {
        if let Some(e) = &self.end {
            return Ok(e.clone());
        }
        let steps = self.replayer.steps;
        let i = self.cursor_at(steps, now)?;
        let facts = RunWorlds::end_facts_of(&self.replayer, &self.cursors[i].0);
        self.end = Some(facts.clone());
        Ok(facts)
    }

    fn keep_view(&mut self, at: (u64, bool), json: Arc<str>, now: u64) {
        if self.views.len() >= VIEWS_PER_RUN
            && let Some(old) = self
                .views
                .iter()
                .min_by_key(|(_, (_, used))| *used)
                .map(|(k, _)| *k)
        {
            self.views.remove(&old);
        }
        self.views.insert(at, (json, now));
    }

    /// The world after decision `step` (default: the last complete one) as JSON,
    /// exactly as [`tbsim_engine::inspect::world_at`] renders it.
    fn view(
        &mut self,
        step: Option<u64>,
        answers: bool,
        now: u64,
    ) -> Result<Arc<str>, ReplayError> {
        let steps = self.replayer.steps;
        let at = step.unwrap_or(steps).min(steps);
        if let Some((json, used)) = self.views.get_mut(&(at, answers)) {
            *used = now;
            return Ok(Arc::clone(json));
        }
        let i = self.cursor_at(at, now)?;
        let c = &self.cursors[i].0;
        // As `world_at`: a finished run's last step is settled (ended and judged),
        // after which that world is no step's any more, so it is given up.
        let settles = self.replayer.recorded.end.is_some() && c.sim().steps() >= steps;
        if !settles {
            let json = render(&self.replayer, c.sim(), answers)?;
            self.keep_view((at, answers), Arc::clone(&json), now);
            return Ok(json);
        }
        if self.end.is_none() {
            self.end = Some(RunWorlds::end_facts_of(&self.replayer, c));
        }
        let mut sim = self.cursors.swap_remove(i).0.into_sim();
        settle_sim(&mut sim, &self.replayer.recorded, steps);
        // Both renderings, while the settled world is at hand (the one with answers
        // is only ever handed out where the route allows it).
        let mut asked = None;
        for a in [false, true] {
            let json = render(&self.replayer, &sim, a)?;
            if a == answers {
                asked = Some(Arc::clone(&json));
            }
            self.keep_view((at, a), json, now);
        }
        Ok(asked.expect("both renderings made"))
    }
}

fn render(
    r: &Replayer,
    sim: &tbsim_engine::sim::Sim,
    answers: bool,
) -> Result<Arc<str>, ReplayError> {
    let view = world_view(sim, &r.loaded, r.steps, answers);
    // Through a `Value`, as the route always answered (its keys in the same order).
    serde_json::to_value(view)
        .and_then(|v| serde_json::to_string(&v))
        .map(Arc::from)
        .map_err(|e| ReplayError::Format(PathBuf::from("world"), 0, e.to_string()))
}

/// A run's slot: empty until its directory is first read.
type Slot = Arc<Mutex<Option<RunWorlds>>>;

/// The worlds of the runs looked at last (see the module docs).
#[derive(Default)]
pub struct Worlds {
    runs: Mutex<BTreeMap<PathBuf, (Slot, u64)>>,
    clock: AtomicU64,
}

impl std::fmt::Debug for Worlds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("Worlds")
            .field("runs", &runs.len())
            .finish_non_exhaustive()
    }
}

impl Worlds {
    /// Nothing kept yet.
    pub fn new() -> Worlds {
        Worlds::default()
    }

    /// Runs `f` on the worlds of the run in `dir`, read (again) when its content
    /// changed. Requests for one run wait for each other (the second gets the
    /// first's work); other runs' do not.
    fn with_run<T>(
        &self,
        dir: &Path,
        f: impl FnOnce(&mut RunWorlds, u64) -> Result<T, ReplayError>,
    ) -> Result<T, ReplayError> {
        let now = self.clock.fetch_add(1, Ordering::Relaxed);
        let slot = {
            let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
            if !runs.contains_key(dir)
                && runs.len() >= RUNS_KEPT
                && let Some(old) = runs
                    .iter()
                    .min_by_key(|(_, (_, used))| *used)
                    .map(|(d, _)| d.clone())
            {
                runs.remove(&old);
            }
            let (slot, used) = runs
                .entry(dir.to_path_buf())
                .or_insert_with(|| (Slot::default(), now));
            *used = now;
            Arc::clone(slot)
        };
        let mut guard = slot.lock().unwrap_or_else(PoisonError::into_inner);
        let key = key_of(dir);
        if guard.as_ref().is_none_or(|w| w.key != key) {
            // Dropped first: the old worlds are not kept alongside the new.
            *guard = None;
            *guard = Some(RunWorlds {
                key,
                replayer: Replayer::open(dir)?,
                cursors: Vec::new(),
                views: BTreeMap::new(),
                end: None,
            });
        }
        f(guard.as_mut().expect("just filled"), now)
    }

    /// The world of the run in `dir` after decision `step` (default: the latest
    /// complete one) as JSON: what [`tbsim_engine::inspect::world_at`] gives.
    pub fn view(
        &self,
        dir: &Path,
        step: Option<u64>,
        answers: bool,
    ) -> Result<Arc<str>, ReplayError> {
        self.with_run(dir, |w, now| w.view(step, answers, now))
    }

    /// File `path` of the run in `dir` after decision `step`: what
    /// [`tbsim_engine::inspect::file_at`] gives.
    pub fn file(
        &self,
        dir: &Path,
        step: Option<u64>,
        path: &str,
    ) -> Result<Option<(Vec<u8>, &'static str)>, ReplayError> {
        // Refused paths need no replay.
        if tbsim_engine::path::VPath::parse(path).is_err() {
            return Ok(None);
        }
        self.with_run(dir, |w, now| {
            let to = step.unwrap_or(w.replayer.steps);
            let i = w.cursor_at(to, now)?;
            Ok(file_bytes(w.cursors[i].0.sim(), path))
        })
    }

    /// The run's figures after its last complete decision (unsettled).
    pub fn end_facts(&self, dir: &Path) -> Result<EndFacts, ReplayError> {
        self.with_run(dir, |w, now| w.end_facts(now))
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tbsim_engine::agent::Oracle;
    use tbsim_engine::inspect::{file_at, world_at};
    use tbsim_engine::protocol::SimConfig;
    use tbsim_engine::run::{RunLimits, run_to_dir};

    use super::*;

    /// The oracle's run of a bundled scenario, written to a temporary directory.
    fn oracle_run(rel: &str) -> tempfile::TempDir {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../content/scenarios")
            .join(rel);
        let loaded = tbsim_scenario::load_file(&path).expect("bundled scenario loads");
        let dir = tempfile::tempdir().unwrap();
        let mut oracle = Oracle::new(&loaded.scenario);
        run_to_dir(
            &loaded,
            &mut oracle,
            SimConfig::default(),
            &RunLimits::default(),
            dir.path(),
        )
        .expect("the run is written");
        dir
    }

    fn fresh(dir: &Path, step: Option<u64>, answers: bool) -> String {
        let v = serde_json::to_value(world_at(dir, step, answers).unwrap()).unwrap();
        serde_json::to_string(&v).unwrap()
    }

    #[test]
    fn kept_worlds_answer_what_a_fresh_replay_answers_at_every_step_asked() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let steps = Replayer::open(dir).unwrap().steps;
        assert!(steps >= 6, "a run long enough to scrub ({steps} steps)");
        let w = Worlds::new();
        // Forwards, backwards (a fresh world), the end (settled), past the end
        // (clamped), the latest by default, and back again after the settled end.
        let asked = [
            Some(0),
            Some(2),
            Some(steps / 2),
            Some(1),
            Some(steps - 1),
            Some(steps),
            Some(steps + 5),
            None,
            Some(steps / 2 + 1),
            Some(3),
        ];
        for (k, s) in asked.into_iter().enumerate() {
            for answers in [false, true] {
                let kept = w.view(dir, s, answers).unwrap();
                assert_eq!(
                    &*kept,
                    fresh(dir, s, answers),
                    "request {k}: step {s:?}, answers {answers}"
                );
            }
        }
        // Every file at a few steps, as a fresh replay reads it.
        let end = world_at(dir, None, false).unwrap();
        for f in end.files.iter().take(4) {
            for s in [Some(0), Some(steps / 2), None] {
                assert_eq!(
                    w.file(dir, s, &f.path).unwrap(),
                    file_at(dir, s, &f.path).unwrap(),
                    "{} at {s:?}",
                    f.path
                );
            }
        }
        assert_eq!(w.file(dir, None, "../etc/passwd").unwrap(), None);
        // The detail's figures: the unsettled world after the last decision.
        let r = tbsim_engine::replay::redrive_dir(dir, None).unwrap();
        let facts = w.end_facts(dir).unwrap();
        assert_eq!(facts.steps, r.steps);
        assert_eq!(facts.progress, r.sim.progress());
        assert_eq!(facts.hint_tiers, r.sim.hint_tiers());
        // Bounded: never more worlds than allowed.
        let runs = w.runs.lock().unwrap();
        let slot = runs.values().next().unwrap().0.lock().unwrap();
        assert!(slot.as_ref().unwrap().cursors.len() <= CURSORS_PER_RUN);
    }

    /// Before/after figures on a real run, by hand (debug builds give ratios only):
    /// `TBSIM_SPEED_RUN=<run dir> cargo test -p tbsim-serve --lib speed_figures -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, run by hand with TBSIM_SPEED_RUN=<run dir>"]
    fn speed_figures() {
        use std::time::Instant;
        let dir = std::path::PathBuf::from(std::env::var("TBSIM_SPEED_RUN").unwrap());
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;
        let steps = Replayer::open(&dir).unwrap().steps;
        let mid = steps / 2;
        let t = Instant::now();
        let _ = world_at(&dir, None, false).unwrap();
        let fresh_last = ms(t);
        let t = Instant::now();
        let _ = world_at(&dir, Some(mid + 1), false).unwrap();
        let fresh_next = ms(t);
        let w = Worlds::new();
        let t = Instant::now();
        w.end_facts(&dir).unwrap();
        w.view(&dir, None, false).unwrap();
        let kept_detail_and_last = ms(t);
        let t = Instant::now();
        w.view(&dir, None, false).unwrap();
        let kept_last_again = ms(t);
        w.view(&dir, Some(mid), false).unwrap();
        let mut next = Vec::new();
        for k in 1..=5 {
            let t = Instant::now();
            w.view(&dir, Some(mid + k), false).unwrap();
            next.push(ms(t));
        }
        println!(
            "steps {steps}: fresh world at the end {fresh_last:.0} ms (the detail replayed once more before); \
             fresh world at {} {fresh_next:.0} ms; kept: detail + world at the end {kept_detail_and_last:.0} ms, \
             again {kept_last_again:.2} ms, next five steps after {mid} {next:.1?} ms",
            mid + 1
        );
    }

    #[test]
    fn only_the_runs_looked_at_last_keep_worlds() {
        let tmp = oracle_run("busy-day.ron");
        let w = Worlds::new();
        // The same run under other names (hard links would do as well).
        let mut dirs = Vec::new();
        for i in 0..RUNS_KEPT + 2 {
            let d = tmp.path().join(format!("copy-{i}"));
            std::fs::create_dir(&d).unwrap();
            for f in ["trajectory.jsonl", "scenario.ron"] {
                std::fs::copy(tmp.path().join(f), d.join(f)).unwrap();
            }
            w.view(&d, Some(1), false).unwrap();
            dirs.push(d);
        }
        let runs = w.runs.lock().unwrap();
        assert_eq!(runs.len(), RUNS_KEPT);
        assert!(!runs.contains_key(&dirs[0]), "the oldest is dropped");
        assert!(runs.contains_key(dirs.last().unwrap()));
    }

    #[test]
    fn a_run_that_grows_is_read_again() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let w = Worlds::new();
        let before = w.view(dir, None, false).unwrap();
        // Cut to its first half: another run as far as the console can tell.
        let text = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let half = lines[..lines.len() / 2].join("\n") + "\n";
        std::fs::write(dir.join("trajectory.jsonl"), half).unwrap();
        let after = w.view(dir, None, false).unwrap();
        assert_ne!(before, after);
        assert_eq!(&*after, fresh(dir, None, false));
    }
}
