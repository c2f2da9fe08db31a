//! Work spread over threads with results handed back in job order, so a report
//! is the same bytes whatever the number of threads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `f` over `jobs` on `threads` threads and hands each result to `sink` on
/// the calling thread, in job order, as soon as it and every earlier one are done.
pub fn run_jobs<J: Sync, T: Send>(
    jobs: &[J],
    threads: usize,
    f: impl Fn(&J) -> T + Sync,
    mut sink: impl FnMut(&J, T),
) {
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, T)>();
    std::thread::scope(|s| {
        for _ in 0..threads.min(jobs.len()) {
            let tx = tx.clone();
            let (next, f) = (&next, &f);
            s.spawn(move || {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(i) else { break };
                    if tx.send((i, f(job))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let mut waiting: BTreeMap<usize, T> = BTreeMap::new();
        let mut due = 0;
        for (i, r) in rx {
            waiting.insert(i, r);
            while let Some(r) = waiting.remove(&due) {
                sink(&jobs[due], r);
                due += 1;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_reach_the_sink_in_job_order_whichever_finishes_first() {
        let jobs: Vec<u64> = (0..40).collect();
        let mut seen = Vec::new();
        run_jobs(
            &jobs,
            4,
            |&j| {
                // Later jobs finish sooner, so results arrive out of order.
                std::thread::sleep(std::time::Duration::from_millis((40 - j) % 7));
                j * 2
            },
            |&j, r| seen.push((j, r)),
        );
        let expected: Vec<(u64, u64)> = jobs.iter().map(|&j| (j, j * 2)).collect();
        assert_eq!(seen, expected);
    }
}
