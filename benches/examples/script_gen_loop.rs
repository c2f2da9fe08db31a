//! Generates the `script_gen` bench's one-task plans of one family (every variant,
//! seeds 0..8) N times (default 20), without criterion's setup of the other bench
//! groups, and prints the wall time per task with the CPU time this process and
//! the family-script host each spent on it: `cargo run --release -p tbsim-benches
//! --example script_gen_loop -- transaction_review_script 20`. For profiling a
//! script family's generation against its Rust generator.
//!
//! `-- --pair kb_fix kb_fix_script [PASSES] [ROUNDS]` compares a Rust family with its
//! script port in one process, in alternating rounds (each round both sides,
//! PASSES passes each, the side that goes first alternating), and prints every
//! round's script/Rust ratio of wall time and of this thread's CPU time, and their
//! medians. With the host in process the thread's CPU time is the whole cost of
//! generation, and the two sides are timed seconds apart, under the same load.

use std::time::{Duration, Instant};

use tbsim_benches::{family_plans, thread_cpu};
use tbsim_gen::{ScenarioPlan, generate_scenario, script_host};

// The allocator `tbsim` ships with, as in the benches.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Clock ticks of user plus system time of `pid` (`/proc/PID/stat`), if readable.
fn ticks(pid: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces; the fields after it are plain.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    Some(f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?)
}

/// The ticks of this process's children (the script hosts it started).
fn children_ticks() -> u64 {
    let mut total = 0;
    for t in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        let kids = std::fs::read_to_string(t.path().join("children")).unwrap_or_default();
        total += kids.split_whitespace().filter_map(ticks).sum::<u64>();
    }
    total
}

/// Every variant's one-task plans, seeds 0..8.
fn plans(key: &str) -> Vec<(u64, ScenarioPlan)> {
    family_plans(key, 8).unwrap_or_else(|| panic!("no family `{key}`"))
}

/// Wall and thread CPU time of `passes` passes over `plans`.
fn timed(plans: &[(u64, ScenarioPlan)], passes: u32) -> (Duration, Duration) {
    let (wall0, cpu0) = (Instant::now(), thread_cpu());
    for _ in 0..passes {
        for (seed, p) in plans {
            std::hint::black_box(generate_scenario(*seed, p).expect("the plan generates"));
        }
    }
    (wall0.elapsed(), thread_cpu() - cpu0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn pair(mut args: impl Iterator<Item = String>) {
    let rust = args.next().expect("--pair RUST SCRIPT [PASSES] [ROUNDS]");
    let script = args.next().expect("--pair RUST SCRIPT [PASSES] [ROUNDS]");
    let passes: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(15);
    let (r, s) = (plans(&rust), plans(&script));
    assert_eq!(r.len(), s.len(), "the two families have as many plans");
    // Untimed: the host is up with the scripts loaded.
    timed(&r, 1);
    timed(&s, 1);
    let in_process = script_host::generates_in_process();
    let tasks = f64::from(passes) * r.len() as f64;
    let us = |d: Duration| d.as_secs_f64() * 1e6 / tasks;
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    println!("round  rust wall/cpu us  script wall/cpu us  ratio wall  ratio cpu");
    for round in 0..rounds {
        let (rt, st) = if round % 2 == 0 {
            let rt = timed(&r, passes);
            (rt, timed(&s, passes))
        } else {
            let st = timed(&s, passes);
            (timed(&r, passes), st)
        };
        let (w, c) = (us(st.0) / us(rt.0), us(st.1) / us(rt.1));
        println!(
            "{round:5}  {:7.0} {:7.0}   {:8.0} {:8.0}   {w:9.2}x  {c:8.2}x",
            us(rt.0),
            us(rt.1),
            us(st.0),
            us(st.1)
        );
        walls.push(w);
        cpus.push(c);
    }
    println!(
        "{script}/{rust}: {} tasks a side a round, median ratio wall {:.2}x, thread CPU {:.2}x{}",
        tasks as u64,
        median(walls),
        median(cpus),
        if in_process {
            ""
        } else {
            " (the host is on a pipe: thread CPU leaves out the host's work)"
        }
    );
}

fn main() {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().is_some_and(|a| a == "--pair") {
        args.next();
        return pair(args);
    }
    let key = args.next().unwrap_or_else(|| "inventory_reorder".into());
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let plans = plans(&key);
    timed(&plans, 1);
    let (own0, kids0) = (ticks("self").unwrap_or(0), children_ticks());
    let (wall, _) = timed(&plans, n);
    let tasks = f64::from(n) * plans.len() as f64;
    let wall = wall.as_secs_f64() * 1e6 / tasks;
    // Linux reports 100 ticks a second.
    let us = |t: u64| t as f64 * 1e4 / tasks;
    let own = us(ticks("self").unwrap_or(0) - own0);
    let host = us(children_ticks() - kids0);
    println!(
        "{key}: {} tasks, per task {wall:.0} us wall, {own:.0} us tbsim CPU, {host:.0} us host CPU",
        tasks as u64
    );
}
