//! Values by TSN in a window of slots from the lowest TSN held.
//!
//! TSNs are handed out densely and leave roughly in order, and what is held at once
//! lies within a receive window: a slot per TSN from the lowest one held costs little,
//! and storing, finding and taking a value cost O(1) — where an ordered tree pays a
//! logarithm and an allocation per TSN. The receiver keeps its out-of-order chunks in
//! one; the simulator's recorder, the first-send time of each chunk not delivered yet.

use std::collections::VecDeque;

/// TSN (unwrapped) → value, for a window of TSNs.
#[derive(Debug)]
pub struct TsnWindow<T> {
    /// TSN of `slots[0]`, which is full unless the window is empty.
    base: u64,
    slots: VecDeque<Option<T>>,
    /// How many slots are full.
    count: usize,
}

impl<T> Default for TsnWindow<T> {
    fn default() -> Self {
        TsnWindow {
            base: 0,
            slots: VecDeque::new(),
            count: 0,
        }
    }
}

impl<T> TsnWindow<T> {
    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Whether a value is held under `tsn`.
    pub fn contains(&self, tsn: u64) -> bool {
        tsn.checked_sub(self.base)
            .and_then(|i| self.slots.get(i as usize))
            .is_some_and(Option::is_some)
    }

    /// Keeps `value` under `tsn`, replacing what was there.
    pub fn insert(&mut self, tsn: u64, value: T) {
        if self.slots.is_empty() {
            self.base = tsn;
        }
        while tsn < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        let i = (tsn - self.base) as usize;
        if i == self.slots.len() {
            // The usual case: the next TSN.
            self.slots.push_back(Some(value));
            self.count += 1;
            return;
        }
        if i > self.slots.len() {
            self.slots.resize_with(i + 1, || None);
        }
        if self.slots[i].replace(value).is_none() {
            self.count += 1;
        }
    }

    /// Takes the value held under `tsn`, if any.
    pub fn remove(&mut self, tsn: u64) -> Option<T> {
        let i = tsn.checked_sub(self.base)? as usize;
        let taken = self.slots.get_mut(i)?.take();
        if taken.is_some() {
            self.count -= 1;
        }
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_values_by_tsn_in_any_order_of_insertion_and_removal() {
        let mut w = TsnWindow::default();
        w.insert(10, 'a');
        w.insert(12, 'c');
        w.insert(8, 'x'); // below the lowest held (a reserved chunk sent later)
        w.insert(12, 'C'); // replaced, as a map would
        assert!(w.contains(12) && w.contains(8) && !w.contains(11) && !w.contains(99));
        assert_eq!(w.remove(11), None);
        assert_eq!(w.remove(12), Some('C'));
        assert_eq!(w.remove(12), None);
        assert_eq!(w.remove(8), Some('x'));
        assert!(!w.is_empty());
        assert_eq!(w.remove(10), Some('a'));
        assert!(w.is_empty() && w.slots.is_empty());
        assert_eq!(w.remove(3), None);
        w.insert(100, 'z');
        assert_eq!((w.remove(99), w.remove(100)), (None, Some('z')));
    }
}
