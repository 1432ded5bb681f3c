//! A 4-ary min-heap of keys: half the levels of a binary heap, and the four children
//! of a node share a cache line, so a pop (the simulator's most frequent operation)
//! touches fewer lines. Keys are totally ordered (unique sequence numbers), so the
//! order in which they leave does not depend on the heap's shape.

/// Anything with a total order used as a heap key.
pub(super) trait HeapKey {
    fn before(&self, other: &Self) -> bool;
}

/// A min-heap with four children per node.
pub(super) struct QuadHeap<K> {
    v: Vec<K>,
}

impl<K> Default for QuadHeap<K> {
    fn default() -> Self {
        QuadHeap { v: Vec::new() }
    }
}

impl<K: HeapKey + Copy> QuadHeap<K> {
    pub(super) fn len(&self) -> usize {
        self.v.len()
    }

    pub(super) fn push(&mut self, k: K) {
        let mut i = self.v.len();
        self.v.push(k);
        // Up while the parent comes after it: parents move down into the hole, the new
        // key is written once where the hole stops.
        while i > 0 {
            let p = (i - 1) / 4;
            if !k.before(&self.v[p]) {
                break;
            }
            self.v[i] = self.v[p];
            i = p;
        }
        self.v[i] = k;
    }

    /// Removes and returns the first key.
    pub(super) fn pop(&mut self) -> Option<K> {
        let last = self.v.pop()?;
        let Some(&top) = self.v.first() else {
            return Some(last);
        };
        // The last key goes down from the root along the first children: they move up
        // into the hole, the key is written once where the hole stops.
        let n = self.v.len();
        let mut i = 0;
        loop {
            let c = 4 * i + 1;
            if c >= n {
                break;
            }
            let m = if c + 4 <= n {
                // A full group (the usual case): the least of four without branches,
                // as a heap's comparisons are unpredictable.
                let k = &self.v[c..c + 4];
                let a = k[1].before(&k[0]) as usize;
                let b = 2 + k[3].before(&k[2]) as usize;
                if k[b].before(&k[a]) {
                    b
                } else {
                    a
                }
            } else {
                let kids = &self.v[c..n];
                let mut m = 0;
                for (j, k) in kids.iter().enumerate().skip(1) {
                    if k.before(&kids[m]) {
                        m = j;
                    }
                }
                m
            };
            let least = self.v[c + m];
            if !least.before(&last) {
                break;
            }
            self.v[i] = least;
            i = c + m;
        }
        self.v[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl HeapKey for (u64, u64) {
        fn before(&self, o: &Self) -> bool {
            self < o
        }
    }

    /// Pseudo-random pushes and pops, checked against a sorted list after each step.
    #[test]
    fn pops_in_key_order_like_a_sorted_list() {
        let mut h = QuadHeap::default();
        let mut sorted: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 99;
        for seq in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 61) < 5 || sorted.is_empty() {
                let k = ((x >> 33) % 1000, seq);
                h.push(k);
                let at = sorted.partition_point(|&s| s < k);
                sorted.insert(at, k);
            } else {
                assert_eq!(h.pop(), Some(sorted.remove(0)));
            }
            assert_eq!(h.len(), sorted.len());
        }
        while let Some(k) = h.pop() {
            assert_eq!(k, sorted.remove(0));
        }
        assert!(sorted.is_empty());
    }
}
