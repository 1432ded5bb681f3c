//! First-transmission times of the chunks not delivered yet, by TSN: a window of slots
//! from the lowest TSN still held, since TSNs are handed out densely and delivered
//! roughly in order (a tree paid an allocation and a logarithm per chunk).

use std::collections::VecDeque;

use cmt_core::Time;

/// TSN → time of its first transmission, for TSNs not delivered yet.
#[derive(Debug, Default)]
pub(crate) struct FirstSent {
    /// TSN of `slots[0]`.
    base: u64,
    slots: VecDeque<Option<Time>>,
}

impl FirstSent {
    /// Records (or overwrites) the first transmission of `tsn`.
    pub(crate) fn insert(&mut self, tsn: u64, at: Time) {
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
            self.slots.push_back(Some(at));
            return;
        }
        if i > self.slots.len() {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(at);
    }

    /// Takes the time recorded for `tsn`, if any.
    pub(crate) fn remove(&mut self, tsn: u64) -> Option<Time> {
        let i = tsn.checked_sub(self.base)? as usize;
        let t = self.slots.get_mut(i)?.take();
        while self.slots.front() == Some(&None) {
            self.slots.pop_front();
            self.base += 1;
        }
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_times_by_tsn_in_any_order_of_sending_and_delivery() {
        let t = Time::from_nanos;
        let mut f = FirstSent::default();
        f.insert(10, t(1));
        f.insert(12, t(3));
        f.insert(8, t(4)); // a lower TSN sent later (a reserved chunk)
        f.insert(12, t(5)); // overwritten, as a map would
        assert_eq!(f.remove(11), None);
        assert_eq!(f.remove(12), Some(t(5)));
        assert_eq!(f.remove(12), None);
        assert_eq!(f.remove(8), Some(t(4)));
        assert_eq!(f.remove(10), Some(t(1)));
        assert!(f.slots.is_empty());
        assert_eq!(f.remove(3), None);
        f.insert(100, t(9));
        assert_eq!(f.remove(100), Some(t(9)));
    }
}
