//! The receiver's out-of-order chunks by TSN, in a window of slots that starts right
//! after the cumulative TSN: a receiver holds only TSNs within 2^16 of it (what gap
//! blocks can report), so a slot each costs little, and storing, finding and taking
//! the next chunk in order cost O(1) — where an ordered tree paid a logarithm and an
//! allocation per chunk.

use std::collections::VecDeque;

/// Values by TSN above a cumulative point that only moves up.
#[derive(Debug)]
pub(super) struct ByTsn<T> {
    /// TSN of `slots[0]`: the cumulative point plus one.
    next: u64,
    slots: VecDeque<Option<T>>,
    /// How many slots are full.
    count: usize,
}

impl<T> ByTsn<T> {
    /// Empty, with `next` the first TSN not delivered.
    pub(super) fn new(next: u64) -> Self {
        ByTsn {
            next,
            slots: VecDeque::new(),
            count: 0,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub(super) fn contains(&self, tsn: u64) -> bool {
        tsn.checked_sub(self.next)
            .and_then(|i| self.slots.get(i as usize))
            .is_some_and(Option::is_some)
    }

    /// Keeps `value` under `tsn`, which must be above the cumulative point and not held.
    pub(super) fn insert(&mut self, tsn: u64, value: T) {
        let i = (tsn - self.next) as usize;
        if i >= self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        debug_assert!(self.slots[i].is_none(), "TSN {tsn} held twice");
        self.slots[i] = Some(value);
        self.count += 1;
    }

    /// The cumulative point moves up by one, onto the next TSN: takes what was held
    /// under that TSN, if anything.
    pub(super) fn advance(&mut self) -> Option<T> {
        self.next += 1;
        let taken = self.slots.pop_front().flatten();
        if taken.is_some() {
            self.count -= 1;
        }
        taken
    }

    /// Whether the next TSN (the cumulative point plus one) is held.
    pub(super) fn next_is_held(&self) -> bool {
        matches!(self.slots.front(), Some(Some(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_out_of_order_values_and_gives_them_back_in_order() {
        let mut h = ByTsn::new(10);
        h.insert(12, 'c');
        h.insert(11, 'b');
        h.insert(14, 'e');
        assert!(h.contains(12) && !h.contains(13) && !h.contains(9) && !h.contains(99));
        assert!(!h.next_is_held(), "10 is missing");
        assert_eq!(h.advance(), None, "10 delivered directly");
        assert!(h.next_is_held());
        assert_eq!(h.advance(), Some('b'));
        assert_eq!(h.advance(), Some('c'));
        assert!(!h.next_is_held() && !h.is_empty());
        assert_eq!(h.advance(), None, "13 delivered directly");
        assert_eq!(h.advance(), Some('e'));
        assert!(h.is_empty());
        // Past the held ones, the window is empty and starts where the point is.
        assert_eq!(h.advance(), None);
        h.insert(17, 'x');
        assert_eq!(
            (h.advance(), h.advance(), h.advance()),
            (None, Some('x'), None)
        );
    }
}
