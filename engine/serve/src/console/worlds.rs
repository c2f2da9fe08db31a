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
//!
//! With a [`ViewCache`] ([`Worlds::with_cache`]), a finished run's end world
//! (its view without answers and its [`EndFacts`]) is kept on disk once rendered,
//! and a console that opens the run later answers the end from there without
//! reading or replaying anything. It then replays the run in the background
//! (after [`CHECK_DELAY`]) and compares: the same bytes, and the replay's work is
//! kept (the next scrub needs no reading); different, and the entry is replaced by
//! the replay's, which is what is answered from then on (with a warning on stderr,
//! and [`Worlds::corrections`] counting it, so the console's details are made
//! again).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use tbsim_engine::inspect::{file_bytes, settle_sim, world_view};
use tbsim_engine::replay::{ReplayCursor, ReplayError, Replayer};

use super::view_cache::{Entry, RunDigest, ViewCache};

/// Worlds kept per run (each a whole simulation).
pub const CURSORS_PER_RUN: usize = 3;
/// Runs whose worlds are kept.
pub const RUNS_KEPT: usize = 4;
/// Rendered world views kept per run.
pub const VIEWS_PER_RUN: usize = 48;
/// How long a check of a cache entry waits before it replays: the page that asked
/// paints first (a replay takes a core for up to a second on a long run).
pub const CHECK_DELAY: std::time::Duration = std::time::Duration::from_secs(1);

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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
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
    dir: PathBuf,
    /// Read when first needed: a run answered from the view cache needs none until
    /// a step other than its end is asked for.
    replayer: Option<Replayer>,
    /// Complete decisions (the replayer's, or the cache entry's until it is read).
    steps: u64,
    /// Worlds not settled, each with when it was last used.
    cursors: Vec<(ReplayCursor, u64)>,
    /// JSON of the world after a step, with or without answers.
    views: BTreeMap<(u64, bool), (Arc<str>, u64)>,
    end: Option<EndFacts>,
    /// The view cache and the run's digest in it, when there is one.
    cache: Option<(Arc<ViewCache>, RunDigest)>,
    /// The end is in the cache (found there, or put).
    cached: bool,
    /// The end world's view kept in `views` is the cache entry's text, answered
    /// without a replay (until a replay's takes its place).
    view_from_cache: bool,
}

/// Where a world view answered came from (the world route says it in
/// [`SOURCE_HEADER`], so a test or a person timing the page can tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The view cache's entry: nothing of the run was read or replayed.
    Cache,
    /// Rendered by this console (a replay, or kept from one).
    Replay,
}

impl Source {
    /// The header's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Cache => "cache",
            Source::Replay => "replay",
        }
    }
}

/// The world route's header naming the [`Source`] of its answer.
pub const SOURCE_HEADER: &str = "x-tbsim-world-source";

impl RunWorlds {
    /// Reads the run's directory, unless it was read already.
    fn load(&mut self) -> Result<(), ReplayError> {
        if self.replayer.is_some() {
            return Ok(());
        }
        let r = Replayer::open(&self.dir)?;
        if r.steps != self.steps {
            // The cache entry said otherwise: none of its answers stand.
            self.views.clear();
            self.view_from_cache = false;
            self.end = None;
            self.steps = r.steps;
        }
        self.replayer = Some(r);
        Ok(())
    }

    /// A world after decision `to` (clamped to the run's): the kept world nearest
    /// before it, advanced; a fresh one when none is (the least used dropped).
    /// Returns its index in `cursors`.
    fn cursor_at(&mut self, to: u64, now: u64) -> Result<usize, ReplayError> {
        self.load()?;
        let replayer = self.replayer.as_ref().expect("just loaded");
        let to = to.min(replayer.steps);
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
                self.cursors.push((replayer.cursor(), now));
                self.cursors.len() - 1
            }
        };
        let (c, used) = &mut self.cursors[i];
        *used = now;
        replayer.advance(c, to)?;
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
        let i = self.cursor_at(self.steps, now)?;
        let replayer = self.replayer.as_ref().expect("loaded");
        let facts = RunWorlds::end_facts_of(replayer, &self.cursors[i].0);
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
    ) -> Result<(Arc<str>, Source), ReplayError> {
        let at = step.unwrap_or(self.steps).min(self.steps);
        if let Some((json, used)) = self.views.get_mut(&(at, answers)) {
            *used = now;
            let from_cache = self.view_from_cache && !answers && at == self.steps;
            let source = if from_cache {
                Source::Cache
            } else {
                Source::Replay
            };
            return Ok((Arc::clone(json), source));
        }
        self.load()?;
        // Read again: the run's own count stands over a cache entry's.
        let steps = self.steps;
        let at = step.unwrap_or(steps).min(steps);
        let i = self.cursor_at(at, now)?;
        let replayer = self.replayer.as_ref().expect("loaded");
        let c = &self.cursors[i].0;
        // As `world_at`: a finished run's last step is settled (ended and judged),
        // after which that world is no step's any more, so it is given up.
        let settles = replayer.recorded.end.is_some() && c.sim().steps() >= steps;
        if !settles {
            let json = render(replayer, c.sim(), answers)?;
            self.keep_view((at, answers), Arc::clone(&json), now);
            return Ok((json, Source::Replay));
        }
        let facts = self
            .end
            .get_or_insert_with(|| RunWorlds::end_facts_of(replayer, c))
            .clone();
        let mut sim = self.cursors.swap_remove(i).0.into_sim();
        settle_sim(&mut sim, &replayer.recorded, steps);
        // Both renderings, while the settled world is at hand (the one with answers
        // is only ever handed out where the route allows it).
        let plain = render(replayer, &sim, false)?;
        let with = render(replayer, &sim, true)?;
        self.keep_view((at, false), Arc::clone(&plain), now);
        self.keep_view((at, true), Arc::clone(&with), now);
        self.put_in_cache(&facts, &plain);
        Ok((if answers { with } else { plain }, Source::Replay))
    }

    /// Keeps a finished run's end (rendered without answers) in the view cache,
    /// once. A cache that cannot be written only means the next console replays.
    fn put_in_cache(&mut self, facts: &EndFacts, plain: &str) {
        let Some((cache, digest)) = &self.cache else {
            return;
        };
        if self.cached {
            return;
        }
        self.cached = true;
        if let Ok(facts) = serde_json::to_string(facts) {
            let entry = Entry {
                facts,
                view: plain.to_owned(),
            };
            if let Err(e) = cache.put(digest, &entry) {
                eprintln!("console: warning: {e}");
            }
        }
    }
}

/// The facts of a cache entry, if they read back to the same text (a float read
/// back a unit in the last place off would make the detail differ from a replay's).
fn facts_of(text: &str) -> Option<EndFacts> {
    let facts: EndFacts = serde_json::from_str(text).ok()?;
    (serde_json::to_string(&facts).ok()? == text).then_some(facts)
}

/// A finished run's end as a replay makes it: the replayer (its cursor spent),
/// the facts (and their text) and the end world's views without and with answers.
struct Replayed {
    replayer: Replayer,
    facts: EndFacts,
    facts_text: String,
    plain: Arc<str>,
    with: Arc<str>,
}

fn replay_end(dir: &Path) -> Result<Replayed, ReplayError> {
    let replayer = Replayer::open(dir)?;
    let mut c = replayer.cursor();
    replayer.advance(&mut c, replayer.steps)?;
    let facts = RunWorlds::end_facts_of(&replayer, &c);
    let mut sim = c.into_sim();
    settle_sim(&mut sim, &replayer.recorded, replayer.steps);
    let plain = render(&replayer, &sim, false)?;
    let with = render(&replayer, &sim, true)?;
    let facts_text = serde_json::to_string(&facts)
        .map_err(|e| ReplayError::Format(PathBuf::from("world"), 0, e.to_string()))?;
    Ok(Replayed {
        replayer,
        facts,
        facts_text,
        plain,
        with,
    })
}

/// What [`prime`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primed {
    /// The entry was written.
    Written,
    /// An intact entry for the run's bytes was there already.
    Present,
    /// The run has not ended (interrupted, or still going): its end is not fixed.
    NotEnded,
    /// The run's trajectory is compressed, which the console does not page.
    Compressed,
}

/// Why [`prime`] wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum PrimeError {
    /// The run's files cannot be read.
    #[error("cannot read the run `{0}` for the view cache")]
    Unreadable(PathBuf),
    /// The run cannot be replayed.
    #[error(transparent)]
    Replay(#[from] ReplayError),
    /// The cache cannot be written.
    #[error(transparent)]
    Cache(#[from] super::view_cache::CacheError),
}

/// [`prime`] as a session's end hook: a failure is a warning (the run itself is
/// written; only its first open will replay).
pub fn prime_hook(cache: std::sync::Arc<ViewCache>) -> crate::session::RunEnded {
    crate::session::RunEnded(std::sync::Arc::new(move |dir: &Path| {
        if let Err(e) = prime(&cache, dir) {
            eprintln!("console: warning: {e}");
        }
    }))
}

/// Puts the end of the finished run in `dir` in `cache`, as a console opening it
/// would (the same replay, the same text), so the run's first open anywhere that
/// reads this cache needs no replay. Called by whatever wrote the run, once it has
/// ended; the run's files are only read.
pub fn prime(cache: &ViewCache, dir: &Path) -> Result<Primed, PrimeError> {
    if tbsim_engine::run_dir::is_compressed(dir) {
        return Ok(Primed::Compressed);
    }
    let digest = RunDigest::of(dir).ok_or_else(|| PrimeError::Unreadable(dir.to_path_buf()))?;
    if cache.get(&digest).is_some() {
        return Ok(Primed::Present);
    }
    let replayer = Replayer::open(dir)?;
    // As `RunWorlds::view`: only a finished run's end is settled and kept.
    if replayer.recorded.end.is_none() {
        return Ok(Primed::NotEnded);
    }
    let mut c = replayer.cursor();
    replayer
        .advance(&mut c, replayer.steps)
        .map_err(ReplayError::from)?;
    let facts = RunWorlds::end_facts_of(&replayer, &c);
    let mut sim = c.into_sim();
    settle_sim(&mut sim, &replayer.recorded, replayer.steps);
    let view = render(&replayer, &sim, false)?;
    let facts = serde_json::to_string(&facts)
        .map_err(|e| ReplayError::Format(PathBuf::from("world"), 0, e.to_string()))?;
    // The digest of the bytes replayed: a run that changed meanwhile is not
    // entered under its old bytes.
    if RunDigest::of(dir) != Some(digest) {
        return Err(PrimeError::Unreadable(dir.to_path_buf()));
    }
    cache.put(
        &digest,
        &Entry {
            facts,
            view: view.to_string(),
        },
    )?;
    Ok(Primed::Written)
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
    cache: Option<Arc<ViewCache>>,
    /// Runs opened with their end answered from the cache.
    hits: AtomicU64,
    /// Cache entries found to differ from their run's replay.
    corrections: Arc<AtomicU64>,
    /// The background checks of cache entries answered from.
    checks: Mutex<Vec<JoinHandle<()>>>,
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

    /// Nothing kept yet; finished runs' ends kept in `cache` too (see the module
    /// docs).
    pub fn with_cache(cache: Arc<ViewCache>) -> Worlds {
        Worlds {
            cache: Some(cache),
            ..Worlds::default()
        }
    }

    /// How many cache entries answered from were found to differ from a replay
    /// (a detail made before a correction is made again).
    pub fn corrections(&self) -> u64 {
        self.corrections.load(Ordering::SeqCst)
    }

    /// How many runs were opened with their end answered from the cache.
    pub fn cache_hits(&self) -> u64 {
        self.hits.load(Ordering::SeqCst)
    }

    /// Runs the background checks of cache entries started so far now (without
    /// their [`CHECK_DELAY`]) and waits for them.
    pub fn wait_for_checks(&self) {
        let checks =
            std::mem::take(&mut *self.checks.lock().unwrap_or_else(PoisonError::into_inner));
        for c in checks {
            c.thread().unpark();
            let _ = c.join();
        }
    }

    /// A run's worlds, its end answered from the view cache when an intact entry
    /// for its bytes is there (a check against a replay then starts in the
    /// background); else read from its directory.
    fn open_run(
        &self,
        dir: &Path,
        key: Key,
        slot: &Slot,
        now: u64,
    ) -> Result<RunWorlds, ReplayError> {
        // Only a run with its result written can have a fixed end: a live run (a
        // serve session, a batch job under `--ui`) is read again at every step, and
        // hashing its whole trajectory each time would be for nothing.
        let ended = dir.join("result.json").symlink_metadata().is_ok();
        let cache = self
            .cache
            .as_ref()
            .filter(|_| ended)
            .and_then(|c| Some((Arc::clone(c), RunDigest::of(dir)?)));
        let mut w = RunWorlds {
            key,
            dir: dir.to_path_buf(),
            replayer: None,
            steps: 0,
            cursors: Vec::new(),
            views: BTreeMap::new(),
            end: None,
            cache,
            cached: false,
            view_from_cache: false,
        };
        if let Some((cache, digest)) = &w.cache
            && let Some(entry) = cache.get(digest)
            && let Some(facts) = facts_of(&entry.facts)
        {
            // Answered from the cache only with a check under way: no thread to
            // spare, and the run is read as if there were no entry.
            let check = Check {
                dir: dir.to_path_buf(),
                key,
                digest: *digest,
                cache: Arc::clone(cache),
                entry: entry.clone(),
                slot: Arc::clone(slot),
                corrections: Arc::clone(&self.corrections),
                now,
            };
            if let Ok(h) = std::thread::Builder::new()
                .name("tbsim-console-check".into())
                .spawn(move || check.run())
            {
                let mut checks = self.checks.lock().unwrap_or_else(PoisonError::into_inner);
                // Only the ones under way are kept (a long-lived console opens many).
                checks.retain(|c| !c.is_finished());
                checks.push(h);
                w.steps = facts.steps;
                w.views
                    .insert((facts.steps, false), (Arc::from(entry.view), now));
                w.end = Some(facts);
                w.cached = true;
                w.view_from_cache = true;
                self.hits.fetch_add(1, Ordering::SeqCst);
                return Ok(w);
            }
        }
        w.load()?;
        Ok(w)
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
            *guard = Some(self.open_run(dir, key, &slot, now)?);
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
        Ok(self.view_from(dir, step, answers)?.0)
    }

    /// [`Worlds::view`], with where the answer came from.
    pub fn view_from(
        &self,
        dir: &Path,
        step: Option<u64>,
        answers: bool,
    ) -> Result<(Arc<str>, Source), ReplayError> {
        self.with_run(dir, |w, now| w.view(step, answers, now))
    }

    /// [`Worlds::view_from`] without answers and, when the view the page holds (the
    /// world after step `since`, with `since_id` its [`super::world_delta::view_id`]) is
    /// still kept, the answer as the changes from it ([`super::world_delta::delta`]).
    pub fn view_since(
        &self,
        dir: &Path,
        step: Option<u64>,
        since: u64,
        since_id: &str,
    ) -> Result<(Arc<str>, Source, Option<String>), ReplayError> {
        self.with_run(dir, |w, now| {
            // Taken first: asking for the new view may drop it from those kept.
            let held = w.views.get(&(since, false)).map(|(j, _)| Arc::clone(j));
            let (view, source) = w.view(step, false, now)?;
            let delta = held
                .filter(|h| super::world_delta::view_id(h) == since_id)
                .and_then(|h| super::world_delta::delta(&h, &view, since));
            Ok((view, source, delta))
        })
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
            let to = step.unwrap_or(w.steps);
            let i = w.cursor_at(to, now)?;
            Ok(file_bytes(w.cursors[i].0.sim(), path))
        })
    }

    /// The run's figures after its last complete decision (unsettled).
    pub fn end_facts(&self, dir: &Path) -> Result<EndFacts, ReplayError> {
        self.with_run(dir, |w, now| w.end_facts(now))
    }
}

/// A check of a cache entry answered from against the run's replay (see the
/// module docs), run on a thread of its own: the replay holds no lock, so the
/// run's requests go on meanwhile.
struct Check {
    dir: PathBuf,
    key: Key,
    digest: RunDigest,
    cache: Arc<ViewCache>,
    entry: Entry,
    slot: Slot,
    corrections: Arc<AtomicU64>,
    now: u64,
}

impl Check {
    fn run(self) {
        // Woken early by `wait_for_checks` (or spuriously: it only starts sooner).
        std::thread::park_timeout(CHECK_DELAY);
        let name = self
            .dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let replayed = replay_end(&self.dir);
        let mut guard = self.slot.lock().unwrap_or_else(PoisonError::into_inner);
        // The run's worlds as answered from the entry (not since read again).
        let w = guard.as_mut().filter(|w| w.key == self.key);
        match replayed {
            Ok(r) if r.facts_text == self.entry.facts && *r.plain == *self.entry.view => {
                // Right: the replay's work is kept.
                if let Some(w) = w {
                    if w.replayer.is_none() && r.replayer.steps == w.steps {
                        w.replayer = Some(r.replayer);
                    }
                    w.views.entry((w.steps, true)).or_insert((r.with, self.now));
                }
            }
            Ok(r) => {
                eprintln!(
                    "console: warning: the cached end world of `{name}` differs from its replay; it is replaced by the replayed one"
                );
                self.cache.remove(&self.digest);
                let entry = Entry {
                    facts: r.facts_text,
                    view: r.plain.to_string(),
                };
                if let Err(e) = self.cache.put(&self.digest, &entry) {
                    eprintln!("console: warning: {e}");
                }
                if let Some(w) = w {
                    w.views.clear();
                    w.view_from_cache = false;
                    w.cursors.clear();
                    w.steps = r.replayer.steps;
                    w.views.insert((w.steps, false), (r.plain, self.now));
                    w.views.insert((w.steps, true), (r.with, self.now));
                    w.end = Some(r.facts);
                    w.replayer = Some(r.replayer);
                }
                self.corrections.fetch_add(1, Ordering::SeqCst);
            }
            Err(e) => {
                eprintln!(
                    "console: warning: `{name}` cannot be replayed to check its cached end world ({e}); the entry is dropped"
                );
                self.cache.remove(&self.digest);
                // Read again at the next request, which then says why it cannot.
                if w.is_some() {
                    *guard = None;
                }
                self.corrections.fetch_add(1, Ordering::SeqCst);
            }
        }
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

    /// A console with a view cache in `cache`.
    fn cached(cache: &Path) -> Worlds {
        Worlds::with_cache(Arc::new(ViewCache::open(cache).unwrap()))
    }

    /// What the detail's figures are, as the cache keeps them.
    fn facts_text(w: &Worlds, dir: &Path) -> String {
        serde_json::to_string(&w.end_facts(dir).unwrap()).unwrap()
    }

    #[test]
    fn a_cached_end_is_what_a_replay_answers_byte_for_byte() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let cache_dir = tempfile::tempdir().unwrap();
        let plain = Worlds::new();
        let want_facts = facts_text(&plain, dir);
        // The first console replays, and keeps the end.
        let first = cached(cache_dir.path());
        assert_eq!(
            &*first.view(dir, None, false).unwrap(),
            fresh(dir, None, false)
        );
        assert_eq!(first.cache_hits(), 0);
        let entry = ViewCache::open(cache_dir.path())
            .unwrap()
            .get(&RunDigest::of(dir).unwrap())
            .expect("the end is kept");
        assert_eq!(entry.view, fresh(dir, None, false));
        assert_eq!(entry.facts, want_facts);
        // The next answers from it, the same bytes, and its check agrees.
        let next = cached(cache_dir.path());
        assert_eq!(
            &*next.view(dir, None, false).unwrap(),
            fresh(dir, None, false)
        );
        assert_eq!(facts_text(&next, dir), want_facts);
        assert_eq!(next.cache_hits(), 1);
        next.wait_for_checks();
        assert_eq!(next.corrections(), 0);
        // Everything else is replayed as ever: answers, other steps, files.
        let steps = Replayer::open(dir).unwrap().steps;
        for (s, a) in [
            (None, true),
            (Some(1), false),
            (Some(steps - 1), true),
            (None, false),
        ] {
            assert_eq!(
                &*next.view(dir, s, a).unwrap(),
                fresh(dir, s, a),
                "{s:?} {a}"
            );
        }
        let end = world_at(dir, None, false).unwrap();
        let f = &end.files[0];
        assert_eq!(
            next.file(dir, None, &f.path).unwrap(),
            file_at(dir, None, &f.path).unwrap()
        );
        // A copy of the run (hard links, another directory) shares the entry.
        let copy = tempfile::tempdir().unwrap();
        for f in ["trajectory.jsonl", "scenario.ron", "result.json"] {
            std::fs::hard_link(dir.join(f), copy.path().join(f)).unwrap();
        }
        let third = cached(cache_dir.path());
        assert_eq!(
            &*third.view(copy.path(), None, false).unwrap(),
            fresh(dir, None, false)
        );
        assert_eq!(third.cache_hits(), 1);
        third.wait_for_checks();
    }

    #[test]
    fn a_tampered_entry_or_a_changed_run_is_not_served() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let cache_dir = tempfile::tempdir().unwrap();
        cached(cache_dir.path()).view(dir, None, false).unwrap();
        let digest = RunDigest::of(dir).unwrap();
        let entry_file = std::fs::read_dir(cache_dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "view"))
            .expect("an entry");
        // A score edited in the entry: not served; the replay's end is, and kept.
        let text = std::fs::read_to_string(&entry_file).unwrap();
        let edited = text.replacen("\"score\":", "\"score\":9", 1);
        assert_ne!(edited, text);
        std::fs::write(&entry_file, edited).unwrap();
        let w = cached(cache_dir.path());
        assert_eq!(&*w.view(dir, None, false).unwrap(), fresh(dir, None, false));
        assert_eq!(w.cache_hits(), 0, "the edited entry is not served");
        assert_eq!(
            std::fs::read_to_string(&entry_file).unwrap(),
            text,
            "written anew"
        );
        // The run cut to its first half: another run, which finds no entry.
        let traj = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
        let lines: Vec<&str> = traj.lines().collect();
        std::fs::write(
            dir.join("trajectory.jsonl"),
            lines[..lines.len() / 2].join("\n") + "\n",
        )
        .unwrap();
        assert_ne!(RunDigest::of(dir).unwrap(), digest);
        let w = cached(cache_dir.path());
        assert_eq!(&*w.view(dir, None, false).unwrap(), fresh(dir, None, false));
        assert_eq!(w.cache_hits(), 0);
    }

    #[test]
    fn an_entry_that_differs_from_the_replay_is_replaced_by_it() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let cache_dir = tempfile::tempdir().unwrap();
        let right = fresh(dir, None, false);
        let right_facts = facts_text(&Worlds::new(), dir);
        // An intact entry that is wrong (as an engine changed under the same
        // version would leave): other figures, another world.
        let cache = ViewCache::open(cache_dir.path()).unwrap();
        let digest = RunDigest::of(dir).unwrap();
        let mut facts: EndFacts = serde_json::from_str(&right_facts).unwrap();
        facts.hint_tiers.insert("task/forged".into(), (3, 3));
        let wrong = Entry {
            facts: serde_json::to_string(&facts).unwrap(),
            view: right.replacen("\"step\":", "\"step\":1", 1),
        };
        cache.put(&digest, &wrong).unwrap();
        let w = cached(cache_dir.path());
        // Answered from the entry at once (it is intact), then checked.
        let first = w.view(dir, None, false).unwrap();
        assert_eq!(w.cache_hits(), 1);
        w.wait_for_checks();
        assert_eq!(w.corrections(), 1);
        assert_eq!(&*first, wrong.view, "what was answered before the check");
        assert_eq!(&*w.view(dir, None, false).unwrap(), right);
        assert_eq!(facts_text(&w, dir), right_facts);
        assert_eq!(
            cache.get(&digest),
            Some(Entry {
                facts: right_facts,
                view: right
            }),
            "the entry is the replay's now"
        );
    }

    #[test]
    fn a_primed_run_is_answered_from_the_cache_at_its_first_open() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = ViewCache::open(cache_dir.path()).unwrap();
        let traj = std::fs::read(dir.join("trajectory.jsonl")).unwrap();
        assert_eq!(prime(&cache, dir).unwrap(), Primed::Written);
        assert_eq!(prime(&cache, dir).unwrap(), Primed::Present);
        assert_eq!(
            std::fs::read(dir.join("trajectory.jsonl")).unwrap(),
            traj,
            "the run is only read"
        );
        // The entry is what a console that replayed the run would have kept.
        let replayed = tempfile::tempdir().unwrap();
        let first = cached(replayed.path());
        first.view(dir, None, false).unwrap();
        let digest = RunDigest::of(dir).unwrap();
        let by_console = ViewCache::open(replayed.path())
            .unwrap()
            .get(&digest)
            .unwrap();
        assert_eq!(cache.get(&digest), Some(by_console));
        // A console's first open: the end from the cache, the same bytes, then
        // from a replay once the check has run (its work kept).
        let w = cached(cache_dir.path());
        let (view, source) = w.view_from(dir, None, false).unwrap();
        assert_eq!((&*view, source), (&*fresh(dir, None, false), Source::Cache));
        assert_eq!(w.cache_hits(), 1);
        let (_, with) = w.view_from(dir, None, true).unwrap();
        assert_eq!(with, Source::Replay, "answers are never cached");
        w.wait_for_checks();
        assert_eq!(w.corrections(), 0);
        let (_, source) = w.view_from(dir, Some(1), false).unwrap();
        assert_eq!(source, Source::Replay);
        // Without a cache, a replay.
        let (_, source) = Worlds::new().view_from(dir, None, false).unwrap();
        assert_eq!(source, Source::Replay);
        // A run without its result (still being written) is not looked up.
        std::fs::rename(dir.join("result.json"), dir.join("result.kept")).unwrap();
        let (_, source) = cached(cache_dir.path())
            .view_from(dir, None, false)
            .unwrap();
        assert_eq!(source, Source::Replay);
    }

    /// Drops a recorded run's end and score lines: a run still going (or cut off).
    fn cut_before_end(dir: &Path) {
        let traj = std::fs::read_to_string(dir.join("trajectory.jsonl")).unwrap();
        let cut: Vec<&str> = traj
            .lines()
            .take_while(|l| !l.starts_with("{\"type\":\"end\""))
            .collect();
        std::fs::write(dir.join("trajectory.jsonl"), cut.join("\n") + "\n").unwrap();
    }

    #[test]
    fn a_run_not_ended_is_not_primed() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        cut_before_end(dir);
        let cache_dir = tempfile::tempdir().unwrap();
        let cache = ViewCache::open(cache_dir.path()).unwrap();
        assert_eq!(prime(&cache, dir).unwrap(), Primed::NotEnded);
        assert_eq!(cache.get(&RunDigest::of(dir).unwrap()), None);
        // Nothing to read: an error, nothing written.
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            prime(&cache, empty.path()),
            Err(PrimeError::Unreadable(_))
        ));
        let entries = std::fs::read_dir(cache_dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".view")
            })
            .count();
        assert_eq!(entries, 0);
    }

    #[test]
    fn a_live_run_is_not_kept_in_the_cache() {
        let tmp = oracle_run("busy-day.ron");
        let dir = tmp.path();
        cut_before_end(dir);
        let cache_dir = tempfile::tempdir().unwrap();
        let w = cached(cache_dir.path());
        assert_eq!(&*w.view(dir, None, false).unwrap(), fresh(dir, None, false));
        let cache = ViewCache::open(cache_dir.path()).unwrap();
        assert_eq!(cache.get(&RunDigest::of(dir).unwrap()), None);
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
