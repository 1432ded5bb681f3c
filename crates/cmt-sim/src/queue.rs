//! The event queue, ordered by `(time, seq)`, so events at the same instant run in the
//! order they were scheduled (deterministic, FIFO among equals). Events are small plain
//! values (packets wait in their link's pipe, not in the queue), so they are stored
//! themselves and move by copy: in a sorted array while few are pending, in a 4-ary heap
//! once many are. Keys are unique, so the order in which events leave does not depend
//! on the store.

mod quad_heap;
mod sorted;

use cmt_core::Time;
use quad_heap::{HeapKey, QuadHeap};
use sorted::Sorted;

/// Pending events past which the sorted array gives way to the heap (for good: a
/// simulation that once had this many pending, with background traffic say, keeps
/// having many).
const SORTED_MAX: usize = 48;

/// Where pending events are kept.
enum Store<K> {
    Few(Sorted<K>),
    Many(QuadHeap<K>),
}

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
    store: Store<Entry<E>>,
    seq: u64,
    /// The key of the event popped last.
    popped: (Time, u64),
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            store: Store::Few(Sorted::default()),
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
    #[inline]
    pub fn push_reserved(&mut self, at: Time, seq: u64, ev: E) {
        let e = Entry::new(at, seq, ev);
        match &mut self.store {
            Store::Few(s) if s.len() < SORTED_MAX => s.push(e),
            _ => self.push_to_heap(e),
        }
    }

    /// [`push_reserved`](Self::push_reserved) once the sorted array is full or gone.
    #[inline(never)]
    fn push_to_heap(&mut self, e: Entry<E>) {
        match &mut self.store {
            Store::Few(s) => {
                let mut heap = QuadHeap::default();
                s.drain().for_each(|k| heap.push(k));
                heap.push(e);
                self.store = Store::Many(heap);
            }
            Store::Many(h) => h.push(e),
        }
    }
    /// Removes and returns the earliest event.
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let e = match &mut self.store {
            Store::Few(s) => s.pop(),
            Store::Many(h) => h.pop(),
        }?;
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
        match &self.store {
            Store::Few(s) => s.len(),
            Store::Many(h) => h.len(),
        }
    }
    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
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

    /// Pseudo-random pushes and pops that pass the sorted array's size and move to the
    /// heap: events leave in `(time, seq)` order throughout, as a sorted list says.
    #[test]
    fn keeps_the_order_across_the_move_from_array_to_heap() {
        let mut q = EventQueue::default();
        let mut want: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 3;
        for step in 0..3_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Mostly pushes early on (the queue grows past the array), balanced later.
            let push = (x >> 61) < if step < 200 { 7 } else { 4 };
            if push || want.is_empty() {
                let at = q.popped().0.as_nanos() + (x >> 40) % 50;
                let seq = q.reserve();
                q.push_reserved(Time::from_nanos(at), seq, seq);
                let k = (at, seq);
                let i = want.partition_point(|&w| w < k);
                want.insert(i, k);
            } else {
                let (at, seq) = want.remove(0);
                assert_eq!(q.pop(), Some((Time::from_nanos(at), seq)));
            }
            assert_eq!(q.len(), want.len());
        }
        assert!(
            matches!(q.store, Store::Many(_)),
            "the queue grew past the array"
        );
    }
}
