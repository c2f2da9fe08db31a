//! Runs the oracle's `busy-day` N times (default 2000) with a digest-only trajectory,
//! for profiling the engine's cost per action with `perf` without criterion's setup
//! of the other bench groups: `cargo run --profile release-debug -p tbsim-benches
//! --example busy_day_loop -- 2000`.

use tbsim_benches::{BUSY_DAY, load_scenario, run_oracle_day};
use tbsim_engine::trajectory::Trajectory;

fn main() {
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(2000);
    let loaded = load_scenario(BUSY_DAY);
    let (first, _) = run_oracle_day(&loaded, Trajectory::digest_only());
    let start = std::time::Instant::now();
    for _ in 0..n {
        let (r, _) = run_oracle_day(&loaded, Trajectory::digest_only());
        assert_eq!(r.digest, first.digest);
    }
    let per_day = start.elapsed() / n;
    println!(
        "{n} days, {per_day:?} per day, {} decisions, digest {}",
        first.steps, first.digest
    );
}
