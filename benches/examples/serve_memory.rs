//! Memory per live idle session of the session API (issue 11, item 5).
//!
//! Opens N sessions (default 10,000) on one scenario through a `tbsim_serve`
//! [`Registry`] (what `POST /v1/sessions` calls, without the HTTP layer), one after
//! another; when `open` returns, the session has handed out its first observation
//! and its run is parked waiting for a decision, i.e. idle. Prints the process's
//! resident set (`VmRSS` in `/proc/self/status`) and thread count before, every
//! 1,000 sessions and after, and the difference per session.
//!
//! Every session's run is `run_to_dir_async` on a tokio *blocking* thread that it
//! keeps for its whole life (`tbsim_serve::session`), so N live sessions need N OS
//! threads, and the runtime's blocking pool must allow N: this binary builds its
//! runtime with `max_blocking_threads(N + 16)` by default. `tbsim serve` builds its
//! runtime with tokio's default cap of 512; `--blocking-threads 512` reproduces it
//! (an `open` that has not returned within `--open-timeout` seconds is reported,
//! and the program stops there).
//!
//! `--scenarios-only` loads the scenario N times instead and holds the copies (each
//! `Registry::open` loads its own), to show what of a session's memory is its scenario.
//!
//! The sessions are not closed at the end (closing writes every run directory);
//! the scratch output directory is removed and the process exits.
//!
//! ```sh
//! cargo run --release -p tbsim-benches --example serve_memory -- --sessions 10000
//! cargo run --release -p tbsim-benches --example serve_memory -- --sessions 600 --blocking-threads 512
//! ```

use std::time::{Duration, Instant};

use tbsim_benches::scenarios_dir;
use tbsim_core::protocol::FeedbackPolicy;
use tbsim_serve::registry::{OpenRequest, Registry, RegistryConfig};
use tbsim_serve::scenarios::ScenarioRoots;

struct Args {
    sessions: usize,
    scenario: String,
    blocking_threads: Option<usize>,
    open_timeout: u64,
    scenarios_only: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: serve_memory [--sessions N] [--scenario NAME] [--blocking-threads M] [--open-timeout SECS] [--scenarios-only]"
    );
    std::process::exit(2)
}

fn parse_args() -> Args {
    let mut a = Args {
        sessions: 10_000,
        scenario: "busy-day".into(),
        blocking_threads: None,
        open_timeout: 30,
        scenarios_only: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        if flag == "--scenarios-only" {
            a.scenarios_only = true;
            continue;
        }
        let value = it.next().unwrap_or_else(|| usage());
        match flag.as_str() {
            "--sessions" => a.sessions = value.parse().unwrap_or_else(|_| usage()),
            "--scenario" => a.scenario = value,
            "--blocking-threads" => {
                a.blocking_threads = Some(value.parse().unwrap_or_else(|_| usage()));
            }
            "--open-timeout" => a.open_timeout = value.parse().unwrap_or_else(|_| usage()),
            _ => usage(),
        }
    }
    a
}

/// A field of `/proc/self/status` in kB (`VmRSS`) or as a count (`Threads`).
fn status(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    text.lines()
        .find_map(|l| {
            let rest = l.strip_prefix(field)?.strip_prefix(':')?;
            rest.split_whitespace().next()?.parse().ok()
        })
        .unwrap_or_else(|| panic!("no {field} in /proc/self/status"))
}

/// Resident kB in `/proc/self/smaps`: (in thread stacks, everywhere else). A thread
/// stack is an anonymous private mapping of exactly the runtime's stack size
/// (tokio's default, 2 MiB); other mappings of that size would be counted too.
fn rss_split() -> (u64, u64) {
    let text = std::fs::read_to_string("/proc/self/smaps").expect("read /proc/self/smaps");
    let (mut stacks, mut other) = (0, 0);
    let mut is_stack = false;
    for line in text.lines() {
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if let Some((lo, hi)) = first.split_once('-')
            && let (Ok(lo), Ok(hi)) = (u64::from_str_radix(lo, 16), u64::from_str_radix(hi, 16))
        {
            // `addr perms offset dev inode [path]`: anonymous when there is no path.
            is_stack = hi - lo == STACK
                && words.nth(3).is_some_and(|i| i == "0")
                && words.next().is_none();
        } else if first == "Rss:" {
            let kb: u64 = words.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            if is_stack {
                stacks += kb;
            } else {
                other += kb;
            }
        }
    }
    (stacks, other)
}

/// tokio's default thread stack size.
const STACK: u64 = 2 * 1024 * 1024;

fn mib(kb: u64) -> f64 {
    kb as f64 / 1024.0
}

fn report(label: &str, n: usize, base_kb: u64, started: Instant) {
    let rss = status("VmRSS");
    let per = if n > 0 {
        (rss.saturating_sub(base_kb)) as f64 / n as f64
    } else {
        0.0
    };
    println!(
        "{label:>8} sessions={n:>6} rss={:>9.1} MiB threads={:>6} per_session={per:>7.1} KiB elapsed={:.1}s",
        mib(rss),
        status("Threads"),
        started.elapsed().as_secs_f64()
    );
}

/// `--scenarios-only`: what N loaded copies of the scenario alone hold (each
/// `Registry::open` loads its own), for comparison with a session.
fn scenarios_only(args: &Args) {
    let roots = ScenarioRoots::new(&[scenarios_dir()]).expect("the bundled scenarios");
    let path = roots.resolve(&args.scenario).expect("a known scenario");
    let load = || tbsim_scenario::load_file(&path).expect("the scenario loads");
    drop(load());
    let base = status("VmRSS");
    let started = Instant::now();
    let held: Vec<_> = (0..args.sessions).map(|_| load()).collect();
    report("loaded", held.len(), base, started);
    println!("(scenario copies only: no session, no thread)");
}

fn main() {
    let args = parse_args();
    if args.scenarios_only {
        scenarios_only(&args);
        return;
    }
    let out = std::env::temp_dir().join(format!("tbsim-serve-memory-{}", std::process::id()));
    std::fs::create_dir_all(&out).expect("create the scratch dir");
    let blocking = args.blocking_threads.unwrap_or(args.sessions + 16);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(blocking)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let roots = ScenarioRoots::new(&[scenarios_dir()]).expect("the bundled scenarios");
    let registry = Registry::new(RegistryConfig {
        roots,
        out: out.clone(),
        max_sessions: args.sessions + 1,
        idle_timeout: Duration::from_secs(24 * 3600),
        unused_timeout: Duration::from_secs(24 * 3600),
        keep_finished: tbsim_serve::registry::DEFAULT_KEEP_FINISHED,
        view_cache: None,
    });
    let request = || OpenRequest {
        scenario: args.scenario.clone(),
        seed: None,
        hints: 0,
        feedback: FeedbackPolicy::default(),
        max_steps: 400,
        agent: "http:memory".into(),
        tag: None,
        compress: false,
    };
    println!(
        "scenario={} sessions={} max_blocking_threads={blocking}",
        args.scenario, args.sessions
    );
    let opened = runtime.block_on(async {
        // One session opened and closed first, so one-time costs (lazy statics, the
        // allocator's first arenas, the first blocking thread) are in the baseline.
        let (id, _) = registry.open(request()).await.expect("open a session");
        let entry = registry.remove(&id).expect("the session");
        entry.session.lock().await.close().await.expect("close it");
        tokio::time::sleep(Duration::from_millis(200)).await;
        let base = status("VmRSS");
        let started = Instant::now();
        report("before", 0, base, started);
        let mut n = 0;
        while n < args.sessions {
            let open = registry.open(request());
            match tokio::time::timeout(Duration::from_secs(args.open_timeout), open).await {
                Ok(r) => {
                    r.expect("open a session");
                }
                Err(_) => {
                    println!(
                        "open #{} did not return within {} s (blocking pool of {blocking} threads, {} held): stopping",
                        n + 1,
                        args.open_timeout,
                        registry.len()
                    );
                    break;
                }
            }
            n += 1;
            if n % 1000 == 0 {
                report("opening", n, base, started);
            }
        }
        // Idle: let anything still settling settle.
        tokio::time::sleep(Duration::from_secs(2)).await;
        report("after", n, base, started);
        println!("VmHWM={:.1} MiB", mib(status("VmHWM")));
        let (stacks, other) = rss_split();
        println!(
            "smaps: {:.1} MiB resident in 2 MiB anonymous mappings (thread stacks), {:.1} MiB elsewhere; per session {:.1} KiB + {:.1} KiB",
            mib(stacks),
            mib(other),
            stacks as f64 / n.max(1) as f64,
            other.saturating_sub(base) as f64 / n.max(1) as f64
        );
        n
    });
    println!(
        "live idle sessions held: {opened} (registry holds {})",
        registry.len()
    );
    let _ = std::fs::remove_dir_all(&out);
    // The sessions' threads are parked waiting for decisions; dropping the runtime
    // would wait for them. Exit instead.
    std::process::exit(0);
}
