//! A few keys in a sorted array, the first key last: popping it is taking the last
//! element, and a new key — usually due soon, so near the end — is found by a short
//! scan from the end. For the handful of events a simulation usually has pending (one
//! per link direction and endpoint) this beats a heap's sift down and up; a long array
//! would not (an insert moves what is after it), so the queue moves to a heap when it
//! grows.

use super::quad_heap::HeapKey;

/// Keys in descending order.
pub(super) struct Sorted<K> {
    v: Vec<K>,
}

impl<K> Default for Sorted<K> {
    fn default() -> Self {
        Sorted { v: Vec::new() }
    }
}

impl<K: HeapKey + Copy> Sorted<K> {
    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    #[inline]
    pub(super) fn push(&mut self, k: K) {
        // Insertion sort's step: the keys after `k` move up one as the scan passes them.
        let mut i = self.v.len();
        self.v.push(k);
        while i > 0 && self.v[i - 1].before(&k) {
            self.v[i] = self.v[i - 1];
            i -= 1;
        }
        self.v[i] = k;
    }

    /// Removes and returns the first key.
    pub(super) fn pop(&mut self) -> Option<K> {
        self.v.pop()
    }

    /// Takes every key out, in no particular order.
    pub(super) fn drain(&mut self) -> impl Iterator<Item = K> + '_ {
        self.v.drain(..)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_key_order() {
        let mut s = Sorted::default();
        for k in [(5u64, 1u64), (1, 2), (9, 3), (1, 1), (7, 0)] {
            s.push(k);
        }
        let order: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(order, [(1, 1), (1, 2), (5, 1), (7, 0), (9, 3)]);
    }
}
