//! The event queue: a min-heap ordered by `(time, seq)`, so events at the same instant
//! run in the order they were scheduled (deterministic, FIFO among equals). Events are
//! small plain values (packets wait in their link's pipe, not in the queue), so they
//! sit in the heap itself and move by copy.

mod quad_heap;

use cmt_core::Time;
use quad_heap::{HeapKey, QuadHeap};

/// A pending event and its order key: `(time, seq)` packed into one integer, time in
/// the high half, so one comparison orders two entries.
#[derive(Clone, Copy)]
struct Entry<E> {
    key: u128,
    ev: E,
}

impl<E> Entry<E> {
    fn new(at: Time, seq: u64, ev: E) -> Self {
        Entry {
            key: (at.as_nanos() as u128) << 64 | seq as u128,
            ev,
        }
    }

    fn at(&self) -> Time {
        Time::from_nanos((self.key >> 64) as u64)
    }

    fn seq(&self) -> u64 {
        self.key as u64
    }
}

impl<E> HeapKey for Entry<E> {
    fn before(&self, o: &Self) -> bool {
        self.key < o.key
    }
}

/// Pending events.
pub struct EventQueue<E> {
    heap: QuadHeap<Entry<E>>,
    seq: u64,
    /// The key of the event popped last.
    popped: (Time, u64),
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: QuadHeap::default(),
            seq: 0,
            popped: (Time::ZERO, 0),
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Schedules `ev` at `at`.
    pub fn push(&mut self, at: Time, ev: E) {
        let seq = self.reserve();
        self.push_reserved(at, seq, ev);
    }

    /// Takes the sequence number the next [`push`](Self::push) would get, for an event
    /// that will be pushed later with [`push_reserved`](Self::push_reserved): it then
    /// runs exactly where it would have run had it been pushed now.
    pub fn reserve(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// Schedules `ev` at `at` with a sequence number from [`reserve`](Self::reserve).
    pub fn push_reserved(&mut self, at: Time, seq: u64, ev: E) {
        self.heap.push(Entry::new(at, seq, ev));
    }
    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = self.heap.pop()?;
        self.popped = (e.at(), e.seq());
        Some((e.at(), e.ev))
    }
    /// The `(time, sequence number)` of the event popped last: every event with a
    /// smaller key has run.
    pub fn popped(&self) -> (Time, u64) {
        self.popped
    }
    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_by_time_then_by_insertion_order() {
        let mut q = EventQueue::default();
        q.push(Time::from_nanos(5), 'a');
        q.push(Time::from_nanos(1), 'b');
        q.push(Time::from_nanos(5), 'c');
        q.push(Time::from_nanos(1), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
    }
}
