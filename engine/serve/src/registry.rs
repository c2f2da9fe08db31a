//! The sessions a server holds: unguessable ids, a cap on how many, idle expiry.
//!
//! Shared by every front end (the HTTP session API, an MCP server): each takes a
//! [`Registry`], creates sessions through it and reaches them only by id. Sessions
//! are independent worlds: a session's id is the only handle to it, ids are 128
//! random bits from the OS, and nothing of one session is reachable from another.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use tbsim_core::protocol::FeedbackPolicy;
use tbsim_core::segment::{Segment, confined_join};
use tbsim_scenario::load_file;

use crate::scenarios::{ResolveError, ScenarioRoots};
use crate::session::{Session, SessionError, SessionInfo, SessionSpec, SessionState, Turn};
use tbsim_engine::live::Control;

/// How a registry is set up.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Where scenarios are read from.
    pub roots: ScenarioRoots,
    /// Where each session writes its run directory (`<out>/<session id>/`).
    pub out: PathBuf,
    /// Most sessions held at once (a session whose run is over gives its slot up
    /// when a new one needs it).
    pub max_sessions: usize,
    /// A session untouched this long is closed (its run ends as abandoned, its
    /// directory is written) and forgotten.
    pub idle_timeout: Duration,
    /// A session whose agent has taken no step this long gives its slot up to a
    /// client that needs one when the cap is reached (it is closed, as abandoned):
    /// clients that open worlds and walk away (an MCP `initialize`, then nothing)
    /// cannot hold every slot for the whole idle timeout.
    pub unused_timeout: Duration,
    /// How long a session that ended and left the registry (deleted, expired, its
    /// MCP transport gone) stays readable from memory by id, with its final
    /// result; after that its state is read back from its run directory.
    pub keep_finished: Duration,
    /// Called with each finished session's run directory (the console's view
    /// cache, so its first open needs no replay: `console::worlds::prime_hook`).
    pub view_cache: Option<crate::session::RunEnded>,
}

/// The default of [`RegistryConfig::keep_finished`]: an hour.
pub const DEFAULT_KEEP_FINISHED: Duration = Duration::from_secs(3600);

/// What a client asks for when it opens a session.
#[derive(Debug, Clone)]
pub struct OpenRequest {
    /// A scenario name (see [`crate::scenarios`]).
    pub scenario: String,
    /// Master seed (default: the scenario's).
    pub seed: Option<u64>,
    /// Hint tier (0-3).
    pub hints: u8,
    /// Mentor feedback between days.
    pub feedback: FeedbackPolicy,
    /// Maximum decisions per working day.
    pub max_steps: u64,
    /// The agent's name as recorded (`http:<client>`).
    pub agent: String,
    /// The caller's label for the run (checked by the front end).
    pub tag: Option<String>,
    /// Write the trajectory compressed (`trajectory.jsonl.zst`; not resumable).
    pub compress: bool,
}

/// Why a registry refused.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    /// No session with that id.
    #[error("no session `{0}` (it never existed, was deleted or expired)")]
    UnknownSession(String),
    /// The scenario name is refused or unknown.
    #[error(transparent)]
    Scenario(#[from] ResolveError),
    /// The scenario file does not load.
    #[error("the scenario `{0}` does not load: {1}")]
    InvalidScenario(String, String),
    /// The cap on sessions is reached.
    #[error("too many sessions (at most {0}); delete one or wait for one to expire")]
    TooMany(usize),
    /// The session failed.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The OS gave no randomness for an id.
    #[error("no randomness for a session id: {0}")]
    Random(String),
    /// A run to reattach to is not named by one plain directory name.
    #[error(
        "`resume` must name a run directory under the server's output directory: 1-{MAX_RUN_NAME} characters of A-Z, a-z, 0-9, `-`, `_`, `.`, not starting with `.`"
    )]
    BadRunName,
    /// No run directory of that name.
    #[error("no run `{0}` in the server's output directory")]
    UnknownRun(String),
    /// A live session already drives that run.
    #[error("the run `{0}` is driven by a live session; reattach once it has ended or expired")]
    RunInUse(String),
}

/// The longest run name [`Registry::reattach`] takes.
pub const MAX_RUN_NAME: usize = tbsim_core::segment::MAX_SEGMENT_BYTES;

/// Whether `name` is a session id (the name of a session's run directory).
fn is_session_id(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A session and when it was last used.
#[derive(Debug)]
pub struct Entry {
    /// The session; steps on one session queue behind each other.
    pub session: tokio::sync::Mutex<Session>,
    /// What can be read of it without waiting for a step in flight.
    pub info: SessionInfo,
    last_used: Mutex<Instant>,
}

/// Who decides in a session opened with [`Registry::open_with`].
pub enum Driver {
    /// An external agent, through steps (the session API, MCP, a person playing).
    Remote,
    /// A built-in agent deciding on its own; steps are refused.
    Builtin(Box<dyn tbsim_engine::agent::Agent>),
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Driver::Remote => f.write_str("Remote"),
            Driver::Builtin(a) => write!(f, "Builtin({})", a.name()),
        }
    }
}

/// What else a console asks for when it opens a session.
#[derive(Debug, Default)]
pub struct OpenExtras {
    /// The remote control to attach (one is made when none is given).
    pub control: Option<Arc<Control>>,
    /// Fork from a run directory at a step (the scenario then comes from it).
    pub fork: Option<(PathBuf, u64)>,
}

impl Entry {
    /// A built-in agent's run not finished is never idle: running, or paused by a
    /// watcher (who may have closed the tab to come back later; a paused run is held
    /// on purpose, not abandoned).
    fn busy_on_its_own(&self) -> bool {
        use tbsim_engine::live::LiveState;
        self.info.builtin && self.info.control.status().state != LiveState::Finished
    }

    /// Marks the session as used now (a console acting on it).
    pub fn touch(&self) {
        *self
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .elapsed()
    }
}

/// The sessions of one server (see the module docs).
#[derive(Debug)]
pub struct Registry {
    config: RegistryConfig,
    sessions: Mutex<HashMap<String, Arc<Entry>>>,
    /// Slots taken by sessions being opened, so the cap holds while they start.
    opening: Mutex<usize>,
    /// Run directories being reattached to, so two clients cannot both drive one.
    reattaching: Mutex<BTreeSet<PathBuf>>,
    /// Sessions that ended and left: their final state and when they left (see
    /// [`RegistryConfig::keep_finished`]). They hold no slot.
    finished: Mutex<BTreeMap<String, (Instant, SessionState)>>,
    /// Sessions taken out of `sessions` and not yet in `finished` (being closed):
    /// entered under the `sessions` lock, left after `finished` has them, so a
    /// session's state is readable at every moment of its closing.
    retiring: Mutex<BTreeMap<String, Arc<Entry>>>,
    /// Sessions over that gave their slot up to a new one, not yet deleted by their
    /// owner (whose DELETE then answers their state once, as it would have).
    evicted: Mutex<BTreeSet<String>>,
}

/// A fresh session id: 128 random bits from the OS, as 32 hex digits.
pub fn new_id() -> Result<String, RegistryError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| RegistryError::Random(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

impl Registry {
    /// An empty registry.
    pub fn new(config: RegistryConfig) -> Registry {
        Registry {
            config,
            sessions: Mutex::new(HashMap::new()),
            opening: Mutex::new(0),
            reattaching: Mutex::new(BTreeSet::new()),
            finished: Mutex::new(BTreeMap::new()),
            retiring: Mutex::new(BTreeMap::new()),
            evicted: Mutex::new(BTreeSet::new()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Entry>>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn retiring_map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<Entry>>> {
        self.retiring.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes session `id` out of `map` (the `sessions` lock held) and marks it
    /// retiring until [`Registry::retire`] (or [`Registry::retired`]) is done.
    fn take_out(&self, map: &mut HashMap<String, Arc<Entry>>, id: &str) -> Option<Arc<Entry>> {
        let entry = map.remove(id)?;
        self.retiring_map()
            .insert(id.to_owned(), Arc::clone(&entry));
        Some(entry)
    }

    /// Session `id` is no longer being closed here (its entry was dropped rather
    /// than retired; its run's thread writes the directory).
    pub fn retired(&self, id: &str) {
        self.retiring_map().remove(id);
    }

    /// Sessions held.
    pub fn len(&self) -> usize {
        self.map().len()
    }

    /// Whether none is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Opens a session: resolves and loads the scenario, starts the run in
    /// `<out>/<id>/` and returns the id with the first turn.
    pub async fn open(&self, req: OpenRequest) -> Result<(String, Turn), RegistryError> {
        let (id, turn) = self
            .open_with(req, Driver::Remote, OpenExtras::default())
            .await?;
        let turn = turn.ok_or(RegistryError::Session(SessionError::Over(None)))?;
        Ok((id, turn))
    }

    /// Opens a session driven by `driver` (see [`Registry::open`]); the first turn
    /// comes back for a remote driver only. With a fork, `req.scenario` is not
    /// resolved: the scenario is the parent run's copy.
    pub async fn open_with(
        &self,
        req: OpenRequest,
        driver: Driver,
        extras: OpenExtras,
    ) -> Result<(String, Option<Turn>), RegistryError> {
        let path = match &extras.fork {
            Some((dir, _)) => dir.join("scenario.ron"),
            None => self.config.roots.resolve(&req.scenario)?,
        };
        self.take_slot().await?;
        let res = self.open_slot(req, path, driver, extras).await;
        *self.opening.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
        res
    }

    /// Reserves a slot for a session being opened (the caller gives it back by
    /// decrementing `opening` once the session is in the map, or failed).
    async fn take_slot(&self) -> Result<(), RegistryError> {
        loop {
            {
                let held = self.map().len();
                let mut opening = self.opening.lock().unwrap_or_else(PoisonError::into_inner);
                if held + *opening < self.config.max_sessions {
                    *opening += 1;
                    return Ok(());
                }
            }
            if !self.evict_over().await && !self.evict_unused().await {
                return Err(RegistryError::TooMany(self.config.max_sessions));
            }
        }
    }

    /// The run directory `run` names under the output directory, checked: one
    /// plain name (so the path stays under `out` by construction), a real
    /// directory (not a symlink), whose run files are regular files (a FIFO would
    /// hang the reader, a symlink could point anywhere).
    fn run_dir(&self, run: &str) -> Result<PathBuf, RegistryError> {
        let run = Segment::parse(run).map_err(|_| RegistryError::BadRunName)?;
        let dir = confined_join(&self.config.out, &run);
        let not_resumable = |m: String| RegistryError::Session(SessionError::NotResumable(m));
        match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(RegistryError::UnknownRun(run.to_string()));
            }
            Err(e) => return Err(not_resumable(e.to_string())),
            Ok(m) if !m.is_dir() => {
                return Err(not_resumable(
                    "it is not a directory (a symlink, a FIFO or a file)".into(),
                ));
            }
            Ok(_) => {}
        }
        for file in ["run.json", "scenario.ron", "trajectory.jsonl"] {
            let regular = std::fs::symlink_metadata(dir.join(file)).is_ok_and(|m| m.is_file());
            if !regular {
                return Err(not_resumable(format!(
                    "its `{file}` is missing or not a regular file"
                )));
            }
        }
        Ok(dir)
    }

    /// Reattaches a client to the interrupted or abandoned session run `run` (a
    /// directory name under the output directory; see [`Session::resume`]). The
    /// session's id is the run's name when that is a session id (the directory
    /// of a session this server, or an earlier one, opened), else a fresh one.
    pub async fn reattach(&self, run: &str) -> Result<(String, Turn), RegistryError> {
        let dir = self.run_dir(run)?;
        let id = if is_session_id(run) {
            run.to_owned()
        } else {
            new_id()?
        };
        {
            let mut map = self.map();
            let held = map
                .iter()
                .find(|(i, e)| **i == id || e.info.dir == dir)
                .map(|(i, e)| (i.clone(), Arc::clone(e)));
            if let Some((held_id, e)) = held {
                // A held session whose run ended: finished runs are refused as
                // such; one that failed (its disk filled) makes way for a client
                // reattaching once there is room again.
                let over = e
                    .session
                    .try_lock()
                    .ok()
                    .filter(|s| s.is_over())
                    .map(|s| s.state().progress.end_reason);
                match over {
                    Some(_) if e.info.failure().is_some() => {
                        map.remove(&held_id);
                    }
                    Some(Some(reason)) => {
                        return Err(RegistryError::Session(SessionError::Finished(reason)));
                    }
                    _ => return Err(RegistryError::RunInUse(run.to_owned())),
                }
            }
            drop(map);
            let mut claimed = self
                .reattaching
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if !claimed.insert(dir.clone()) {
                return Err(RegistryError::RunInUse(run.to_owned()));
            }
        }
        let res = match self.take_slot().await {
            Ok(()) => {
                let res = Session::resume(dir.clone(), None).await;
                let res = res.map_err(RegistryError::from).map(|(session, turn)| {
                    let entry = Arc::new(Entry {
                        info: session.info().clone(),
                        session: tokio::sync::Mutex::new(session),
                        last_used: Mutex::new(Instant::now()),
                    });
                    self.map().insert(id.clone(), entry);
                    (id, turn)
                });
                *self.opening.lock().unwrap_or_else(PoisonError::into_inner) -= 1;
                res
            }
            Err(e) => Err(e),
        };
        self.reattaching
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&dir);
        res
    }

    async fn open_slot(
        &self,
        req: OpenRequest,
        path: PathBuf,
        driver: Driver,
        extras: OpenExtras,
    ) -> Result<(String, Option<Turn>), RegistryError> {
        let name = req.scenario.clone();
        let p2 = path.clone();
        let loaded = tokio::task::spawn_blocking(move || load_file(&p2))
            .await
            .map_err(|e| RegistryError::InvalidScenario(name.clone(), e.to_string()))?
            .map_err(|e| {
                let shown = crate::scenarios::client_message(&name, &path, &e);
                RegistryError::InvalidScenario(name, shown)
            })?;
        let id = new_id()?;
        let spec = SessionSpec {
            scenario: Arc::new(loaded),
            seed: req.seed,
            hints: req.hints,
            feedback: req.feedback,
            max_steps: req.max_steps,
            agent: req.agent,
            tag: req.tag,
            compress: req.compress,
            dir: confined_join(&self.config.out, &Segment::sanitize(&id)),
            control: extras.control,
            fork: extras.fork,
            view_cache: self.config.view_cache.clone(),
        };
        let (session, turn) = match driver {
            Driver::Remote => {
                let (s, t) = Session::start(spec).await?;
                (s, Some(t))
            }
            Driver::Builtin(agent) => (Session::start_builtin(spec, agent).await?, None),
        };
        let entry = Arc::new(Entry {
            info: session.info().clone(),
            session: tokio::sync::Mutex::new(session),
            last_used: Mutex::new(Instant::now()),
        });
        self.map().insert(id.clone(), entry);
        Ok((id, turn))
    }

    /// Closes and forgets the session whose run is over and that was left the
    /// longest, if any: a finished run holds no slot a new one needs. Its final
    /// state stays readable (kept, else read back from its directory).
    async fn evict_over(&self) -> bool {
        let victim = {
            let mut map = self.map();
            let id = map
                .iter()
                .filter(|(_, e)| e.session.try_lock().is_ok_and(|s| s.is_over()))
                .max_by_key(|(id, e)| (e.idle_for(), (*id).clone()))
                .map(|(id, _)| id.clone());
            id.and_then(|id| self.take_out(&mut map, &id).map(|e| (id, e)))
        };
        match victim {
            Some((id, e)) => {
                self.evicted_set().insert(id.clone());
                let _ = self.retire(id, &e).await;
                true
            }
            None => false,
        }
    }

    /// Closes and forgets the session unused the longest (an external agent's that
    /// has taken no step for [`RegistryConfig::unused_timeout`]), if any.
    async fn evict_unused(&self) -> bool {
        let victim = {
            let mut map = self.map();
            let id = map
                .iter()
                .filter(|(_, e)| {
                    !e.info.builtin
                        && e.idle_for() >= self.config.unused_timeout
                        && e.session
                            .try_lock()
                            .is_ok_and(|s| s.state().steps == 0 && !s.is_over())
                })
                .max_by_key(|(id, e)| (e.idle_for(), (*id).clone()))
                .map(|(id, _)| id.clone());
            id.and_then(|id| self.take_out(&mut map, &id).map(|e| (id, e)))
        };
        match victim {
            Some((id, e)) => {
                let _ = self.retire(id, &e).await;
                true
            }
            None => false,
        }
    }

    /// Every session held, by id (sorted).
    pub fn list(&self) -> Vec<(String, Arc<Entry>)> {
        let mut all: Vec<(String, Arc<Entry>)> = self
            .map()
            .iter()
            .map(|(id, e)| (id.clone(), Arc::clone(e)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// The session with id `id`, without marking it as used (a console watching).
    pub fn peek(&self, id: &str) -> Result<Arc<Entry>, RegistryError> {
        self.map()
            .get(id)
            .cloned()
            .ok_or_else(|| RegistryError::UnknownSession(id.to_owned()))
    }

    /// The session with id `id`, marked as used now.
    pub fn get(&self, id: &str) -> Result<Arc<Entry>, RegistryError> {
        let entry = self
            .map()
            .get(id)
            .cloned()
            .ok_or_else(|| RegistryError::UnknownSession(id.to_owned()))?;
        entry.touch();
        Ok(entry)
    }

    /// Forgets the session with id `id` and returns it: the caller closes it with
    /// [`Registry::retire`] (or drops it and calls [`Registry::retired`]).
    pub fn remove(&self, id: &str) -> Result<Arc<Entry>, RegistryError> {
        let mut map = self.map();
        self.take_out(&mut map, id)
            .ok_or_else(|| RegistryError::UnknownSession(id.to_owned()))
    }

    /// Closes and forgets every session idle past the timeout (a session busy
    /// stepping is not idle). Returns how many.
    pub async fn expire_idle(&self) -> usize {
        let idle: Vec<(String, Arc<Entry>)> = {
            let mut map = self.map();
            let ids: Vec<String> = map
                .iter()
                .filter(|(_, e)| {
                    e.idle_for() >= self.config.idle_timeout
                        && e.session.try_lock().is_ok()
                        && !e.busy_on_its_own()
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| self.take_out(&mut map, &id).map(|e| (id, e)))
                .collect()
        };
        let n = idle.len();
        for (id, entry) in idle {
            let _ = self.retire(id, &entry).await;
        }
        let keep = self.config.keep_finished;
        self.finished_map().retain(|_, (at, _)| at.elapsed() < keep);
        // An evicted session not deleted by now is no longer remembered as one.
        let finished = self.finished_map();
        self.evicted_set().retain(|id| finished.contains_key(id));
        drop(finished);
        n
    }

    fn evicted_set(&self) -> std::sync::MutexGuard<'_, BTreeSet<String>> {
        self.evicted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn finished_map(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, (Instant, SessionState)>> {
        self.finished.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Closes a session already taken out of the map (its run ends, as abandoned
    /// if it was going, and its directory is written) and keeps its final state
    /// for [`RegistryConfig::keep_finished`]. The state comes back even when
    /// closing failed (a full disk); the error says why.
    pub async fn retire(
        &self,
        id: String,
        entry: &Entry,
    ) -> (SessionState, Result<(), SessionError>) {
        let mut session = entry.session.lock().await;
        let closed = session.close().await.map(|_| ());
        let state = session.state();
        drop(session);
        if !self.config.keep_finished.is_zero() {
            self.finished_map()
                .insert(id.clone(), (Instant::now(), state.clone()));
        }
        self.retired(&id);
        (state, closed)
    }

    /// Ends the session `id` now (a DELETE, a transport that went away): forgets
    /// it, freeing its slot, closes it and returns its final state.
    pub async fn end(&self, id: &str) -> Result<SessionState, RegistryError> {
        let entry = match self.remove(id) {
            Ok(entry) => entry,
            // Its run was over and it gave its slot up: ended already.
            // Its run was over and it gave its slot up: its owner ends it now (once).
            Err(e) => {
                if !self.evicted_set().remove(id) {
                    return Err(e);
                }
                return self.state(id).await;
            }
        };
        let (state, closed) = self.retire(id.to_owned(), &entry).await;
        closed?;
        Ok(state)
    }

    /// The state of session `id`: held, recently finished (kept for
    /// [`RegistryConfig::keep_finished`]), or read back from its run directory
    /// under the output directory once it has a result.
    pub async fn state(&self, id: &str) -> Result<SessionState, RegistryError> {
        if let Ok(entry) = self.get(id) {
            return Ok(entry.session.lock().await.state());
        }
        // Being closed: its state once closed (closing holds the lock).
        let retiring = self.retiring_map().get(id).cloned();
        if let Some(entry) = retiring {
            return Ok(entry.session.lock().await.state());
        }
        let keep = self.config.keep_finished;
        if let Some((at, state)) = self.finished_map().get(id)
            && at.elapsed() < keep
        {
            return Ok(state.clone());
        }
        // Only a session id names a session's directory (and is one plain name).
        if !is_session_id(id) {
            return Err(RegistryError::UnknownSession(id.to_owned()));
        }
        let dir = self.config.out.join(id);
        let state = tokio::task::spawn_blocking(move || {
            // A real directory only: a link could point anywhere.
            let real = std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir());
            real.then(|| crate::session::read_back(&dir)).flatten()
        })
        .await
        .ok()
        .flatten()
        .ok_or_else(|| RegistryError::UnknownSession(id.to_owned()))?;
        if !keep.is_zero() {
            self.finished_map()
                .insert(id.to_owned(), (Instant::now(), state.clone()));
        }
        Ok(state)
    }

    /// Runs [`Registry::expire_idle`] periodically, forever (spawn it).
    pub async fn reap(self: Arc<Self>) {
        let every =
            (self.config.idle_timeout / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
        loop {
            tokio::time::sleep(every).await;
            self.expire_idle().await;
        }
    }

    /// Closes and forgets every session (at shutdown): each run ends and its
    /// directory is written.
    pub async fn close_all(&self) {
        let all: Vec<Arc<Entry>> = self.map().drain().map(|(_, e)| e).collect();
        for entry in all {
            let _ = entry.session.lock().await.close().await;
        }
    }
}
