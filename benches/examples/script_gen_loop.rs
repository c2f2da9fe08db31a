//! Generates the `script_gen` bench's one-task plans of one family (every variant,
//! seeds 0..8) N times (default 20), without criterion's setup of the other bench
//! groups, and prints the wall time per task with the CPU time this process and
//! the family-script host each spent on it: `cargo run --release -p tbsim-benches
//! --example script_gen_loop -- transaction_review_script 20`. For profiling a
//! script family's generation against its Rust generator.

use std::time::Instant;

use tbsim_benches::one_task_plan;
use tbsim_gen::{ScenarioPlan, generate_scenario, registry};

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

fn main() {
    let mut args = std::env::args().skip(1);
    let key = args
        .next()
        .unwrap_or_else(|| "transaction_review_script".into());
    let n: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let variants = registry::by_key(&key)
        .unwrap_or_else(|| panic!("no family `{key}`"))
        .variants();
    let plans: Vec<(u64, ScenarioPlan)> = variants
        .iter()
        .flat_map(|v| (0..8).map(move |seed| (seed, one_task_plan(&v.key, seed, &v.family))))
        .collect();
    for (seed, p) in &plans {
        generate_scenario(*seed, p).expect("the plan generates");
    }
    let (own0, kids0) = (ticks("self").unwrap_or(0), children_ticks());
    let start = Instant::now();
    for _ in 0..n {
        for (seed, p) in &plans {
            std::hint::black_box(generate_scenario(*seed, p).expect("the plan generates"));
        }
    }
    let tasks = f64::from(n) * plans.len() as f64;
    let wall = start.elapsed().as_secs_f64() * 1e6 / tasks;
    // Linux reports 100 ticks a second.
    let us = |t: u64| t as f64 * 1e4 / tasks;
    let own = us(ticks("self").unwrap_or(0) - own0);
    let host = us(children_ticks() - kids0);
    println!(
        "{key}: {} tasks, per task {wall:.0} us wall, {own:.0} us tbsim CPU, {host:.0} us host CPU",
        tasks as u64
    );
}
