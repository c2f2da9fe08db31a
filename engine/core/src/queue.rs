//! The event queue: pending events ordered by `(time, class, seq)`.
//!
//! * `time` is the [`SimTime`] the event is due.
//! * `class` is its [`EventClass`]; at the same instant, lower classes pop first.
//! * `seq` is a counter stamped at push time, so events of one class at one
//!   instant pop in the order they were pushed (FIFO).
//!
//! The key is unique, so the pop order never depends on the heap's internal layout
//! or on a hasher. Underneath is a plain [`std::collections::BinaryHeap`] whose
//! entries carry their payload, keyed by the three parts packed into one `u128`
//! (one comparison per sift step): pushing and popping cost what a bare heap of
//! keys costs. Cancelling and rescheduling, which the engine never does on its hot
//! path, are O(n): the entry is found and the heap rebuilt, so no tombstones slow
//! down the pops. A rescheduled event gets a fresh sequence number, exactly as if
//! it had been cancelled and pushed again.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// The tie-break class of an event. At the same instant, events pop in this order.
///
/// The order encodes the workplace's causality: a new day begins before anything
/// else happens in it, a meeting interrupt is known before
/// tasks released at the same minute, those before messages delivered, and all of
/// them before the agent acts; deadlines and the end of the day come last, so an
/// action taken exactly at a deadline still counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EventClass {
    /// Start of a working day (the morning's mentor feedback).
    DayStart = 0,
    /// Meeting starts, announcements and ends (preemptive interrupts).
    Interrupt = 1,
    /// Task releases.
    Release = 2,
    /// Messages and world changes delivered to the agent.
    Delivery = 3,
    /// The agent's own tool calls.
    Agent = 4,
    /// Task deadlines (checkpoints freeze).
    Deadline = 5,
    /// End of the working day.
    DayEnd = 6,
}

/// A handle to a pending event, for cancelling or rescheduling it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey(u64);

/// A popped event with its key.
#[derive(Debug, Clone, PartialEq)]
pub struct Due<E> {
    /// When the event is due.
    pub time: SimTime,
    /// Its tie-break class.
    pub class: EventClass,
    /// Its push sequence number (unique within the queue's life).
    pub seq: u64,
    /// The payload.
    pub event: E,
}

impl EventClass {
    /// Every class, in pop order (indexed by its discriminant).
    const ALL: [EventClass; 7] = [
        EventClass::DayStart,
        EventClass::Interrupt,
        EventClass::Release,
        EventClass::Delivery,
        EventClass::Agent,
        EventClass::Deadline,
        EventClass::DayEnd,
    ];
}

/// `(time, class, seq)` packed so that comparing the integers compares the tuples:
/// time in the top 64 bits, the class in the next 8, the sequence in the low 56.
fn pack(time: SimTime, class: EventClass, seq: u64) -> u128 {
    debug_assert!(seq < SEQ_LIMIT, "sequence numbers fit in 56 bits");
    (u128::from(time.0) << 64) | (u128::from(class as u8) << 56) | u128::from(seq)
}

/// Sequence numbers stay below 2^56 (seventy thousand years of a million pushes a
/// second): the queue refuses to go on past it rather than mis-order events.
const SEQ_LIMIT: u64 = 1 << 56;

fn unpack(key: u128) -> (SimTime, EventClass, u64) {
    // Lossless by construction of `pack`.
    let time = SimTime((key >> 64) as u64);
    let class = EventClass::ALL[usize::from((key >> 56) as u8)];
    let seq = (key as u64) & (SEQ_LIMIT - 1);
    (time, class, seq)
}

/// A heap entry: the packed key and the payload. Ordered by the key alone, reversed,
/// so the max-heap pops the smallest key; keys are unique, so the order is total.
#[derive(Debug, Clone)]
struct Entry<E> {
    key: u128,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

/// A min-queue of events keyed by `(time, class, seq)`.
#[derive(Debug, Clone)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            next_seq: 0,
        }
    }

    /// An empty queue with room for `n` events.
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(n),
            next_seq: 0,
        }
    }

    /// Schedules `event` at `time` in `class`; returns a handle for cancelling it.
    ///
    /// # Panics
    /// After 2^56 pushes into one queue (the sequence number would no longer fit).
    pub fn push(&mut self, time: SimTime, class: EventClass, event: E) -> EventKey {
        let seq = self.next_seq;
        assert!(seq < SEQ_LIMIT, "event queue sequence numbers exhausted");
        self.next_seq += 1;
        self.heap.push(Entry {
            key: pack(time, class, seq),
            event,
        });
        EventKey(seq)
    }

    /// Removes the pending entry with sequence number `seq`, if any (O(n)).
    fn take(&mut self, seq: u64) -> Option<Entry<E>> {
        let mut all = std::mem::take(&mut self.heap).into_vec();
        let found = all
            .iter()
            .position(|e| (e.key as u64) & (SEQ_LIMIT - 1) == seq)
            .map(|i| all.swap_remove(i));
        self.heap = BinaryHeap::from(all);
        found
    }

    /// Removes a pending event; `None` if it already popped or was cancelled. O(n).
    pub fn cancel(&mut self, key: EventKey) -> Option<E> {
        self.take(key.0).map(|e| e.event)
    }

    /// Moves a pending event to `time`, behind every event already pushed for that
    /// instant and class. Returns the new handle, or `None` if the event is gone. O(n).
    pub fn reschedule(&mut self, key: EventKey, time: SimTime) -> Option<EventKey> {
        let entry = self.take(key.0)?;
        let (_, class, _) = unpack(entry.key);
        Some(self.push(time, class, entry.event))
    }

    /// When the next event is due.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| unpack(e.key).0)
    }

    /// Pops the next event in `(time, class, seq)` order.
    pub fn pop(&mut self) -> Option<Due<E>> {
        let Entry { key, event } = self.heap.pop()?;
        let (time, class, seq) = unpack(key);
        Some(Due {
            time,
            class,
            seq,
            event,
        })
    }

    /// Pops the next event if it is due at or before `limit`.
    pub fn pop_due(&mut self, limit: SimTime) -> Option<Due<E>> {
        match self.peek_time() {
            Some(t) if t <= limit => self.pop(),
            _ => None,
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn class(i: u8) -> EventClass {
        [
            EventClass::DayStart,
            EventClass::Interrupt,
            EventClass::Release,
            EventClass::Delivery,
            EventClass::Agent,
            EventClass::Deadline,
            EventClass::DayEnd,
        ][usize::from(i % 7)]
    }

    #[test]
    fn same_instant_pops_by_class_then_fifo() {
        let mut q = EventQueue::new();
        q.push(SimTime(10), EventClass::Agent, "agent-1");
        q.push(SimTime(10), EventClass::Delivery, "reply-1");
        q.push(SimTime(10), EventClass::Interrupt, "meeting");
        q.push(SimTime(10), EventClass::Delivery, "reply-2");
        q.push(SimTime(5), EventClass::DayEnd, "early");
        q.push(SimTime(10), EventClass::Deadline, "deadline");
        let order: Vec<_> = std::iter::from_fn(|| q.pop().map(|d| d.event)).collect();
        assert_eq!(
            order,
            [
                "early", "meeting", "reply-1", "reply-2", "agent-1", "deadline"
            ]
        );
    }

    #[test]
    fn cancel_and_reschedule() {
        let mut q = EventQueue::new();
        let a = q.push(SimTime(1), EventClass::Release, 'a');
        let b = q.push(SimTime(2), EventClass::Release, 'b');
        q.push(SimTime(3), EventClass::Release, 'c');
        assert_eq!(q.cancel(a), Some('a'));
        assert_eq!(q.cancel(a), None, "cancelling twice is a no-op");
        let b2 = q.reschedule(b, SimTime(3)).unwrap();
        assert!(
            q.reschedule(b, SimTime(9)).is_none(),
            "the old handle is dead"
        );
        assert_eq!(q.len(), 2);
        assert_eq!(
            q.pop().map(|d| d.event),
            Some('c'),
            "rescheduled event queues behind c"
        );
        assert_eq!(q.pop().map(|d| d.event), Some('b'));
        assert_eq!(q.cancel(b2), None, "popped events cannot be cancelled");
        assert!(q.is_empty());
    }

    /// The packed key orders like the tuple at the edges of every part.
    #[test]
    fn extreme_times_and_classes_keep_their_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(u64::MAX), EventClass::DayStart, "last");
        q.push(SimTime(u64::MAX - 1), EventClass::DayEnd, "late");
        q.push(SimTime(0), EventClass::DayEnd, "zero-end");
        q.push(SimTime(0), EventClass::DayStart, "zero-start");
        assert_eq!(q.peek_time(), Some(SimTime(0)));
        let order: Vec<_> =
            std::iter::from_fn(|| q.pop().map(|d| (d.time, d.class, d.event))).collect();
        assert_eq!(
            order,
            [
                (SimTime(0), EventClass::DayStart, "zero-start"),
                (SimTime(0), EventClass::DayEnd, "zero-end"),
                (SimTime(u64::MAX - 1), EventClass::DayEnd, "late"),
                (SimTime(u64::MAX), EventClass::DayStart, "last"),
            ]
        );
        for (i, c) in EventClass::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i, "ALL is indexed by discriminant");
            let k = pack(SimTime(7), *c, SEQ_LIMIT - 1);
            assert_eq!(unpack(k), (SimTime(7), *c, SEQ_LIMIT - 1));
        }
    }

    #[test]
    fn pop_due_respects_the_limit() {
        let mut q = EventQueue::new();
        q.push(SimTime(60), EventClass::Delivery, 1);
        assert!(q.pop_due(SimTime(59)).is_none());
        assert_eq!(q.pop_due(SimTime(60)).map(|d| d.event), Some(1));
    }

    proptest! {
        /// Pop order equals sorting by (time, class, push order), with any subset cancelled
        /// and any subset rescheduled.
        #[test]
        fn pop_order_is_sorted_key_order(
            ops in prop::collection::vec((prop_oneof![0u64..50, (u64::MAX - 50)..=u64::MAX], 0u8..7, 0u8..4, 0u64..50), 0..200)
        ) {
            let mut q = EventQueue::new();
            let mut model: Vec<(SimTime, EventClass, u64, usize)> = Vec::new();
            let mut keys = Vec::new();
            for (i, (t, c, op, t2)) in ops.iter().copied().enumerate() {
                let k = q.push(SimTime(t), class(c), i);
                keys.push((k, i));
                model.push((SimTime(t), class(c), k.0, i));
                match op {
                    // cancel an earlier event
                    1 if i > 0 => {
                        let (k, id) = keys[i / 2];
                        let was = q.cancel(k);
                        let pos = model.iter().position(|m| m.3 == id && m.2 == k.0);
                        prop_assert_eq!(was.is_some(), pos.is_some());
                        if let Some(p) = pos { model.remove(p); }
                    }
                    // reschedule an earlier event
                    2 if i > 0 => {
                        let (k, id) = keys[i / 3];
                        if let Some(nk) = q.reschedule(k, SimTime(t2)) {
                            let p = model.iter().position(|m| m.3 == id && m.2 == k.0).unwrap();
                            let cls = model[p].1;
                            model.remove(p);
                            model.push((SimTime(t2), cls, nk.0, id));
                            keys[i / 3] = (nk, id);
                        }
                    }
                    _ => {}
                }
            }
            model.sort();
            let popped: Vec<usize> = std::iter::from_fn(|| q.pop().map(|d| d.event)).collect();
            let expected: Vec<usize> = model.iter().map(|m| m.3).collect();
            prop_assert_eq!(popped, expected);
        }
    }
}
