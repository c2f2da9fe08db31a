//! Event-queue benches: the classic hold model and a fill/drain pass, on
//! `tbsim_core::queue::EventQueue` (a binary heap of packed keys with payloads; the bench id
//! `priority_queue` is kept from when it was the priority-queue crate) and, as the floor, on
//! `std::collections::BinaryHeap<Reverse<(u64, u8, u64)>>` with the same keys.
//!
//! Hold model: the queue holds `n` pending events; one hold pops the minimum and
//! pushes a follow-up event a random 0..=3600 s ahead (in a random class), so the
//! size stays at `n`. Both structures draw from the same seeded generator and pop
//! the same `(time, class, seq)` sequence (checked before timing).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use tbsim_benches::SplitMix64;
use tbsim_core::queue::{EventClass, EventQueue};
use tbsim_core::time::SimTime;

criterion_group!(benches, hold, fill_drain);

/// Pending-event counts for the hold model. 10k is the boundary of the "small
/// queue" target in the rust anchors (§3.3).
const SIZES: [usize; 3] = [1_000, 10_000, 100_000];
/// Events pushed and popped by one fill/drain iteration.
const FILL: usize = 100_000;
/// Follow-up events land 0..=MAX_DELTA seconds after the popped one (up to an hour,
/// so same-instant ties, broken by class and seq, happen as they do in tbsim).
const MAX_DELTA: u64 = 3_600;
const SEED: u64 = 0x7b51_2026_1121;

const CLASSES: [EventClass; 6] = [
    EventClass::Interrupt,
    EventClass::Release,
    EventClass::Delivery,
    EventClass::Agent,
    EventClass::Deadline,
    EventClass::DayEnd,
];

/// One random follow-up: a delay and a class index.
fn draw(rng: &mut SplitMix64) -> (u64, usize) {
    let delta = rng.below(MAX_DELTA + 1);
    // Lossless: the draw is below 6.
    let class = rng.below(6) as usize;
    (delta, class)
}

/// The hold model on tbsim's `EventQueue`.
struct PqHold {
    q: EventQueue<u64>,
    rng: SplitMix64,
}

impl PqHold {
    fn new(n: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let mut q = EventQueue::with_capacity(n);
        for i in 0..n {
            let (t, c) = draw(&mut rng);
            q.push(SimTime(t), CLASSES[c], i as u64);
        }
        PqHold { q, rng }
    }

    /// Pops the minimum and pushes its follow-up; returns the popped key.
    #[inline]
    fn hold(&mut self) -> (u64, u8, u64) {
        let due = self
            .q
            .pop()
            .expect("the hold model never empties the queue");
        let (delta, c) = draw(&mut self.rng);
        self.q
            .push(SimTime(due.time.0 + delta), CLASSES[c], due.event);
        (due.time.0, due.class as u8, due.seq)
    }
}

/// The same hold model on a plain binary heap (no cancel, no payload map).
struct HeapHold {
    h: BinaryHeap<Reverse<(u64, u8, u64)>>,
    rng: SplitMix64,
    next_seq: u64,
}

impl HeapHold {
    fn new(n: usize) -> Self {
        let mut rng = SplitMix64::new(SEED);
        let mut h = BinaryHeap::with_capacity(n);
        for i in 0..n {
            let (t, c) = draw(&mut rng);
            h.push(Reverse((t, CLASSES[c] as u8, i as u64)));
        }
        HeapHold {
            h,
            rng,
            next_seq: n as u64,
        }
    }

    #[inline]
    fn hold(&mut self) -> (u64, u8, u64) {
        let Reverse(key) = self
            .h
            .pop()
            .expect("the hold model never empties the queue");
        let (delta, c) = draw(&mut self.rng);
        self.h
            .push(Reverse((key.0 + delta, CLASSES[c] as u8, self.next_seq)));
        self.next_seq += 1;
        key
    }
}

/// Both implementations pop the same keys for the first `steps` holds.
fn assert_same_workload(n: usize, steps: usize) {
    let mut a = PqHold::new(n);
    let mut b = HeapHold::new(n);
    for i in 0..steps {
        assert_eq!(a.hold(), b.hold(), "hold {i} at size {n} diverged");
    }
    assert_eq!(a.q.len(), n);
    assert_eq!(b.h.len(), n);
}

fn hold(c: &mut Criterion) {
    let mut group = c.benchmark_group("queue_hold");
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    for n in SIZES {
        assert_same_workload(n, 20_000);
        group.bench_with_input(BenchmarkId::new("priority_queue", n), &n, |b, &n| {
            let mut sim = PqHold::new(n);
            // Reach the steady-state key distribution before timing.
            for _ in 0..2 * n {
                sim.hold();
            }
            b.iter(|| black_box(sim.hold()));
        });
        group.bench_with_input(BenchmarkId::new("binary_heap", n), &n, |b, &n| {
            let mut sim = HeapHold::new(n);
            for _ in 0..2 * n {
                sim.hold();
            }
            b.iter(|| black_box(sim.hold()));
        });
    }
    group.finish();
}

fn fill_drain(c: &mut Criterion) {
    let mut rng = SplitMix64::new(SEED);
    let keys: Vec<(u64, usize)> = (0..FILL)
        .map(|_| {
            let (t, c) = draw(&mut rng);
            // Spread over a working day rather than an hour.
            (t * 9, c)
        })
        .collect();
    let mut group = c.benchmark_group("queue_fill_drain");
    group.warm_up_time(Duration::from_millis(500));
    // About 10-35 ms per iteration: 50 samples fit in the window.
    group.measurement_time(Duration::from_secs(4));
    group.sample_size(50);
    group.throughput(Throughput::Elements(FILL as u64));
    group.bench_with_input(
        BenchmarkId::new("priority_queue", FILL),
        &keys,
        |b, keys| {
            b.iter(|| {
                let mut q = EventQueue::with_capacity(keys.len());
                for (i, &(t, c)) in keys.iter().enumerate() {
                    q.push(SimTime(t), CLASSES[c], i as u64);
                }
                let mut acc = 0u64;
                while let Some(d) = q.pop() {
                    acc = acc.wrapping_add(d.seq ^ d.event);
                }
                black_box(acc)
            });
        },
    );
    group.bench_with_input(BenchmarkId::new("binary_heap", FILL), &keys, |b, keys| {
        b.iter(|| {
            let mut h = BinaryHeap::with_capacity(keys.len());
            for (i, &(t, c)) in keys.iter().enumerate() {
                h.push(Reverse((t, CLASSES[c] as u8, i as u64)));
            }
            let mut acc = 0u64;
            while let Some(Reverse((_, _, seq))) = h.pop() {
                acc = acc.wrapping_add(seq);
            }
            black_box(acc)
        });
    });
    group.finish();
}
