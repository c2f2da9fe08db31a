//! The console from the command line: the agents it may start or fork to, `tbsim
//! view`, and the server `tbsim run --ui` runs beside its batch.

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result, bail};

use tbsim_core::segment::{Segment, confined_sibling};
use tbsim_engine::agent::Agent;
use tbsim_engine::batch::Job;
use tbsim_engine::live::Control;
use tbsim_model::ApiConfig;
use tbsim_model::config::locate;
use tbsim_scenario::LoadedScenario;
use tbsim_serve::console::view_cache::ViewCache;
use tbsim_serve::console::{AgentMaker, Console, FixedRun, Mode, RunKind};
use tbsim_serve::http::{ApiState, DEFAULT_MAX_BODY, serve_with};
use tbsim_serve::registry::{Registry, RegistryConfig};
use tbsim_serve::scenarios::ScenarioRoots;

use crate::agent_names::BUILTIN_AGENTS;
use crate::agents::Models;
use crate::args::{RunOptions, ViewArgs};

/// The agents the console offers: the built-in ones, every adversary, and each
/// configured model alias (`llm:<alias>`).
pub(crate) struct ConsoleAgents {
    opts: RunOptions,
    models: Mutex<Models>,
    aliases: Vec<String>,
}

impl ConsoleAgents {
    pub(crate) fn new(api_config: Option<&Path>) -> Result<ConsoleAgents> {
        let mut opts = RunOptions::with_defaults("oracle", 400);
        opts.api_config = api_config.map(Path::to_path_buf);
        let (path, explicit) = locate(api_config);
        let aliases = if explicit || path.is_file() {
            ApiConfig::load(&path)?.aliases()
        } else {
            Vec::new()
        };
        Ok(ConsoleAgents {
            models: Mutex::new(Models::new(&opts)?),
            opts,
            aliases,
        })
    }
}

impl AgentMaker for ConsoleAgents {
    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = BUILTIN_AGENTS.iter().map(|s| (*s).to_owned()).collect();
        names.extend(
            tbsim_validity::adversary::ADVERSARIES
                .iter()
                .map(|(n, _)| format!("adversary:{n}")),
        );
        names.extend(self.aliases.iter().map(|a| format!("llm:{a}")));
        names
    }

    fn make(
        &self,
        name: &str,
        scenario: &LoadedScenario,
        seed: u64,
    ) -> std::result::Result<Box<dyn Agent>, String> {
        let mut opts = self.opts.clone();
        opts.agent = name.to_owned();
        let mut models = self
            .models
            .lock()
            .map_err(|_| "model setup panicked".to_owned())?;
        models
            .agent(&opts, scenario, seed)
            .map_err(|e| format!("{e:#}"))
    }
}

/// Refuses a non-loopback address without a token (anyone who reaches it could
/// drive runs), and an empty token.
pub(crate) fn check_bind(bind: &SocketAddr, token: Option<&str>, flag: &str) -> Result<()> {
    match token {
        Some("") => bail!("{flag} must not be empty"),
        None if !bind.ip().is_loopback() => bail!(
            "refusing to listen on {bind} without {flag}: anyone who can reach it could drive runs; pass {flag} <secret> or bind a loopback address (127.0.0.1, ::1)"
        ),
        _ => Ok(()),
    }
}

/// Where `tbsim view` keeps end worlds by default, and runs put theirs.
pub(crate) const DEFAULT_VIEW_CACHE: &str = "runs/.console-cache";

/// The view cache that finished runs are put in (`--view-cache DIR`, else
/// [`DEFAULT_VIEW_CACHE`] when `./runs` is a directory; none with `--no-view-cache`).
/// One that cannot be used is only a warning: the runs' first opens replay.
pub(crate) fn run_view_cache(dir: Option<&Path>, off: bool) -> Option<Arc<ViewCache>> {
    if off {
        return None;
    }
    let dir = match dir {
        Some(d) => d,
        // Not made in a folder that has no runs of its own: `tbsim view` from
        // there reads another cache anyway.
        None if Path::new("runs").is_dir() => Path::new(DEFAULT_VIEW_CACHE),
        None => return None,
    };
    match ViewCache::open(dir) {
        Ok(c) => Some(Arc::new(c)),
        Err(e) => {
            eprintln!("warning: {e}; finished runs are replayed when first opened");
            None
        }
    }
}

/// Puts the finished run in `dir` in `cache` (see [`run_view_cache`]); a failure
/// is only a warning (the run's first open replays it).
pub(crate) fn prime_view(cache: &ViewCache, dir: &Path) {
    if let Err(e) = tbsim_serve::console::worlds::prime(cache, dir) {
        eprintln!("warning: {e}");
    }
}

/// A registry for the sessions a console starts (forks, play), writing to `out`
/// (made with the first of them: a console nobody forks from leaves no directory).
fn fork_registry(out: &Path, view_cache: Option<Arc<ViewCache>>) -> Result<Arc<Registry>> {
    if out.exists() && !out.is_dir() {
        bail!("`{}` is not a directory", out.display());
    }
    Ok(Arc::new(Registry::new(RegistryConfig {
        roots: ScenarioRoots::default(),
        out: out.to_path_buf(),
        max_sessions: 64,
        idle_timeout: Duration::from_secs(3600),
        unused_timeout: Duration::from_secs(60),
        keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
        view_cache: view_cache.map(tbsim_serve::console::worlds::prime_hook),
    })))
}

/// Resolves when Ctrl-C or SIGTERM arrives.
pub(crate) async fn stop_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("tbsim-console")
        .max_blocking_threads(64 + 64)
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

/// The ids `tbsim view` gives run directories: each one's path from the parent of
/// the folder named on the command line it was found under, folders joined by `:`
/// (`tbsim view nightly` gives `nightly:meeting-only:trial-0`; a run folder named
/// alone is its name), so a batch's list reads as its layout. Characters other than
/// letters, digits, `-`, `_`, `.` become `_`; an id already taken gets `-2`, `-3`, ...
fn view_ids(found: &[(PathBuf, PathBuf)]) -> Vec<String> {
    let mut taken = std::collections::BTreeSet::new();
    found
        .iter()
        .enumerate()
        .map(|(i, (arg, dir))| {
            let rel = arg
                .parent()
                .and_then(|p| dir.strip_prefix(p).ok())
                .unwrap_or(dir);
            let parts: Vec<String> = rel
                .components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(n) => Some(
                        n.to_string_lossy()
                            .chars()
                            .map(|ch| {
                                if ch.is_ascii_alphanumeric() || matches!(ch, '-' | '_' | '.') {
                                    ch
                                } else {
                                    '_'
                                }
                            })
                            .collect(),
                    ),
                    _ => None,
                })
                .collect();
            let mut id = parts.join(":");
            if id.is_empty() || id.chars().all(|c| c == '.') {
                id = format!("run-{i}");
            }
            let base = id.clone();
            let mut n = 2;
            while !taken.insert(id.clone()) {
                id = format!("{base}-{n}");
                n += 1;
            }
            id
        })
        .collect()
}

/// `tbsim view`: recorded runs, read-only, until Ctrl-C.
pub(crate) fn cmd_view(args: ViewArgs) -> Result<ExitCode> {
    check_bind(&args.bind, args.token.as_deref(), "--token")?;
    // Each run folder with the folder named on the command line it was found under.
    let mut found: Vec<(PathBuf, PathBuf)> = Vec::new();
    // A set, not a scan of `found`: ten thousand runs would cost 10^8 comparisons.
    let mut seen = std::collections::BTreeSet::new();
    for d in &args.run_dirs {
        for run in crate::args::dirs_holding(d, "trajectory.jsonl")? {
            if seen.insert(run.clone()) {
                found.push((d.clone(), run));
            }
        }
    }
    found.sort_by(|a, b| a.1.cmp(&b.1));
    let dirs: Vec<PathBuf> = found.iter().map(|(_, d)| d.clone()).collect();
    let mut fixed = Vec::new();
    for (id, d) in view_ids(&found).into_iter().zip(&dirs) {
        let run = FixedRun::recorded(id, d.clone())
            .with_context(|| format!("cannot show `{}`", d.display()))?;
        fixed.push(Arc::new(run));
    }
    if let Some(dir) = &args.export {
        return export(fixed, dir);
    }
    let agents = Arc::new(ConsoleAgents::new(args.api_config.as_deref())?);
    let cache = if args.no_cache {
        None
    } else {
        match ViewCache::open(&args.cache) {
            Ok(cache) => Some(Arc::new(cache)),
            // Only slower: every run is replayed when opened.
            Err(e) => {
                eprintln!("warning: {e}; runs are replayed when opened");
                None
            }
        }
    };
    // Forks end into the same cache the console reads.
    let registry = fork_registry(&args.out, cache.clone())?;
    // The bundled suites label the runs of their scenarios (a filter of the list).
    let suites = crate::content::content_dir()
        .ok()
        .flatten()
        .map(|c| tbsim_serve::scenarios::suite_names(&c.join("suites")))
        .unwrap_or_default();
    let mut console =
        Console::new(Mode::View, Arc::clone(&registry), fixed, agents.clone()).with_suites(suites);
    if let Some(cache) = cache {
        console = console.with_view_cache(cache);
    }
    let console = Arc::new(console);
    console.warm_in_background();
    let fds = tbsim_serve::conn::raise_fd_limit();
    let mut api = ApiState::new(registry, args.token.clone(), args.token.clone());
    api.allowed_hosts = args.conn.allow_host.clone();
    api.limits = args.conn.limits(fds);
    let api = Arc::new(api);
    let rt = runtime()?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("cannot listen on {}", args.bind))?;
        let addr = listener.local_addr()?;
        println!("console: http://{addr}/");
        std::io::stdout().flush()?;
        eprintln!(
            "showing {} run(s) read-only; forks write to {}; stop with Ctrl-C",
            dirs.len(),
            args.out.display()
        );
        serve_with(
            listener,
            api,
            DEFAULT_MAX_BODY,
            Some(tbsim_serve::console::routes::router(console)),
            stop_signal(),
        )
        .await?;
        anyhow::Ok(())
    })?;
    drop(rt);
    drop(agents);
    Ok(ExitCode::SUCCESS)
}

/// `tbsim view … --export DIR`: the runs as a static site, no server.
fn export(fixed: Vec<Arc<FixedRun>>, dir: &Path) -> Result<ExitCode> {
    let started = std::time::Instant::now();
    // The console needs a registry; an export starts no session, so it is never
    // written to (the directory is not created).
    let registry = fork_registry(&dir.join(".no-forks"), None)?;
    let agents: Arc<dyn AgentMaker> = Arc::new(NoAgents);
    let console = Console::new(Mode::View, registry, fixed, agents);
    let done = console
        .export(dir)
        .with_context(|| format!("cannot export to `{}`", dir.display()))?;
    eprintln!(
        "exported {} run(s) and {} comparison(s) to {} ({} KiB, {:.1} s); open {}",
        done.runs,
        done.comparisons,
        dir.display(),
        done.bytes.div_ceil(1024),
        started.elapsed().as_secs_f64(),
        dir.join("index.html").display()
    );
    Ok(ExitCode::SUCCESS)
}

/// An export offers no agent (nothing is forked from a static page).
struct NoAgents;

impl AgentMaker for NoAgents {
    fn names(&self) -> Vec<String> {
        Vec::new()
    }

    fn make(
        &self,
        name: &str,
        _: &LoadedScenario,
        _: u64,
    ) -> std::result::Result<Box<dyn Agent>, String> {
        Err(format!(
            "a static export starts no agent (asked for `{name}`)"
        ))
    }
}

/// The console `tbsim run --ui` serves beside its batch: every job is listed from
/// the plan and gets a control when it starts.
pub(crate) struct BatchUi {
    runs: Vec<Arc<FixedRun>>,
    paused: Arc<std::sync::atomic::AtomicBool>,
    stop: Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    thread: Mutex<Option<std::thread::JoinHandle<Result<()>>>>,
    keep: bool,
    url: String,
}

/// What `--ui` was given.
pub(crate) struct UiOptions {
    pub(crate) bind: SocketAddr,
    pub(crate) paused: bool,
    pub(crate) keep: bool,
    pub(crate) token: Option<String>,
    pub(crate) api_config: Option<PathBuf>,
    /// The batch's `--tag`.
    pub(crate) tag: Option<String>,
    /// Where finished runs' end worlds are kept (the batch puts each run's there).
    pub(crate) view_cache: Option<Arc<ViewCache>>,
}

impl BatchUi {
    /// Starts the console's server on its own thread (the batch has its runtime).
    pub(crate) fn start(
        jobs: &[Job],
        agent: &str,
        hints: u8,
        out: &Path,
        ui: UiOptions,
    ) -> Result<BatchUi> {
        check_bind(&ui.bind, ui.token.as_deref(), "--ui-token")?;
        let runs: Vec<Arc<FixedRun>> = jobs
            .iter()
            .map(|j| {
                Arc::new(FixedRun {
                    id: format!("job-{}", j.index),
                    kind: RunKind::Batch,
                    dir: j.dir.clone(),
                    scenario: j.name().to_owned(),
                    agent: agent.to_owned(),
                    tag: ui.tag.clone(),
                    seed: j.seed,
                    hints,
                    days: j.scenario.scenario.clock.days,
                    control: Mutex::new(None),
                })
            })
            .collect();
        let forks = fork_dir(out);
        let registry = fork_registry(&forks, ui.view_cache.clone())?;
        let agents = Arc::new(ConsoleAgents::new(ui.api_config.as_deref())?);
        let mut console = Console::new(Mode::Batch, Arc::clone(&registry), runs.clone(), agents);
        if let Some(cache) = ui.view_cache.clone() {
            console = console.with_view_cache(cache);
        }
        let console = Arc::new(console);
        let hold_new = console.hold_new();
        hold_new.store(ui.paused, std::sync::atomic::Ordering::SeqCst);
        let fds = tbsim_serve::conn::raise_fd_limit();
        let mut api = ApiState::new(registry, ui.token.clone(), ui.token.clone());
        api.limits.max_connections =
            tbsim_serve::conn::connection_cap(api.limits.max_connections, fds);
        let api = Arc::new(api);
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (addr_tx, addr_rx) = std::sync::mpsc::channel::<Result<SocketAddr>>();
        let bind = ui.bind;
        let thread = std::thread::Builder::new()
            .name("tbsim-console".into())
            .spawn(move || -> Result<()> {
                let rt = runtime()?;
                let served = rt.block_on(async move {
                    let listener = match tokio::net::TcpListener::bind(bind).await {
                        Ok(l) => l,
                        Err(e) => {
                            let _ =
                                addr_tx.send(Err(anyhow::anyhow!("cannot listen on {bind}: {e}")));
                            return Ok(());
                        }
                    };
                    let _ = addr_tx.send(listener.local_addr().map_err(Into::into));
                    let stop = async move {
                        let _ = stop_rx.await;
                    };
                    serve_with(
                        listener,
                        api,
                        DEFAULT_MAX_BODY,
                        Some(tbsim_serve::console::routes::router(console)),
                        stop,
                    )
                    .await
                });
                drop(rt);
                served.map_err(Into::into)
            })
            .context("cannot start the console's thread")?;
        let addr = addr_rx
            .recv()
            .context("the console's thread ended before listening")??;
        let url = format!("http://{addr}/");
        eprintln!("console: {url}");
        Ok(BatchUi {
            runs,
            paused: hold_new,
            stop: Mutex::new(Some(stop_tx)),
            thread: Mutex::new(Some(thread)),
            keep: ui.keep,
            url,
        })
    }

    /// A control for `job`, registered with the console (called as the job starts).
    pub(crate) fn control(&self, job: &Job) -> Option<Arc<Control>> {
        let id = format!("job-{}", job.index);
        let run = self.runs.iter().find(|r| r.id == id)?;
        // "Pause all" and "resume all" change the flag as the batch goes; it is read
        // under the slot's lock, which they take after setting it, so no job misses one.
        let mut slot = run
            .control
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let c = Control::new(self.paused.load(std::sync::atomic::Ordering::SeqCst));
        *slot = Some(Arc::clone(&c));
        Some(c)
    }

    /// After the batch: waits for Ctrl-C with `--ui-keep`, then stops the server
    /// (forks still going end as abandoned and are written).
    pub(crate) fn finish(&self, wait: bool) -> Result<()> {
        if wait && self.keep {
            eprintln!(
                "the batch is over; the console stays at {} until Ctrl-C",
                self.url
            );
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .context("cannot start the async runtime")?;
            rt.block_on(stop_signal());
        }
        let stop = self.stop.lock().ok().and_then(|mut s| s.take());
        if let Some(s) = stop {
            let _ = s.send(());
        }
        let thread = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(t) = thread {
            match t.join() {
                Ok(r) => r?,
                Err(_) => bail!("the console's thread panicked"),
            }
        }
        Ok(())
    }
}

/// Where a batch console's forks go: beside the batch, so `tbsim report <out>`
/// does not count them.
fn fork_dir(out: &Path) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "batch".to_owned(), |n| n.to_string_lossy().into_owned());
    confined_sibling(out, &Segment::compose(&[&name, "forks"]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn view_ids_follow_the_folders() {
        let p = |a: &str, d: &str| (PathBuf::from(a), PathBuf::from(d));
        let ids = view_ids(&[
            p("/tmp/out/nightly", "/tmp/out/nightly/meeting-only/trial-0"),
            p("/tmp/out/nightly", "/tmp/out/nightly/busy day/trial-10"),
            p("runs/one", "runs/one"),
            p("other/one", "other/one"),
        ]);
        assert_eq!(
            ids,
            [
                "nightly:meeting-only:trial-0",
                "nightly:busy_day:trial-10",
                "one",
                "one-2"
            ]
        );
    }
}
