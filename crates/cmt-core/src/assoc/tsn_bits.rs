//! A set of TSNs as a bitmap over a sliding window: the TSNs a path holds outstanding
//! lie within one receive window of each other, so one bit each, in 64-bit words from a
//! base that follows the lowest, answers insert, remove and "lowest" in O(1) and a range
//! walk in (range / 64 + hits) — where an ordered tree pays a logarithm and an
//! allocation per insert. Iteration is in TSN order, as the tree's was.

use std::collections::VecDeque;

/// A set of TSNs (unwrapped, 64-bit).
#[derive(Clone, Debug, Default)]
pub(super) struct TsnBits {
    /// TSN of bit 0 of `words[0]` (a multiple of 64).
    base: u64,
    words: VecDeque<u64>,
}

impl TsnBits {
    /// Adds `tsn`; true when it was not there.
    pub(super) fn insert(&mut self, tsn: u64) -> bool {
        let aligned = tsn & !63;
        let bit = 1u64 << (tsn % 64);
        if self.words.is_empty() {
            self.base = aligned;
        }
        while aligned < self.base {
            self.words.push_front(0);
            self.base -= 64;
        }
        let w = ((tsn - self.base) / 64) as usize;
        if w == self.words.len() {
            // The next word: TSNs are mostly sent in order.
            self.words.push_back(bit);
            return true;
        }
        if w > self.words.len() {
            self.words.resize(w + 1, 0);
        }
        let word = &mut self.words[w];
        let new = *word & bit == 0;
        *word |= bit;
        new
    }

    /// Removes `tsn`; true when it was there.
    pub(super) fn remove(&mut self, tsn: u64) -> bool {
        if tsn < self.base {
            return false;
        }
        let w = ((tsn - self.base) / 64) as usize;
        let bit = 1u64 << (tsn % 64);
        match self.words.get_mut(w) {
            Some(word) if *word & bit != 0 => {
                *word &= !bit;
                if *word == 0 {
                    self.trim(); // only an emptied word can be one to drop
                }
                true
            }
            _ => false,
        }
    }

    /// Drops empty words at both ends, so the lowest TSN is in the first word.
    fn trim(&mut self) {
        while self.words.front() == Some(&0) {
            self.words.pop_front();
            self.base += 64;
        }
        while self.words.back() == Some(&0) {
            self.words.pop_back();
        }
    }

    /// The lowest TSN in the set.
    #[inline]
    pub(super) fn first(&self) -> Option<u64> {
        let w = *self.words.front()?;
        Some(self.base + w.trailing_zeros() as u64)
    }

    /// The word holding TSNs `start .. start + 64` (`start` a multiple of 64): bit `i`
    /// is TSN `start + i`; 0 outside the window.
    pub(super) fn word_at(&self, start: u64) -> u64 {
        match start.checked_sub(self.base) {
            Some(off) => self.words.get((off / 64) as usize).copied().unwrap_or(0),
            None => 0,
        }
    }

    /// The TSNs it may hold: `(lowest, highest)` of its window, `None` when empty.
    pub(super) fn span(&self) -> Option<(u64, u64)> {
        let n = self.words.len() as u64;
        (n > 0).then(|| (self.base, self.base + 64 * n - 1))
    }

    /// How many TSNs it holds.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The TSNs in `lo ..= hi`, in order.
    pub(super) fn range(&self, lo: u64, hi: u64) -> Range<'_> {
        let end = self.base + 64 * self.words.len() as u64; // exclusive
        let lo = lo.max(self.base);
        let hi = hi.min(end.saturating_sub(1));
        if lo > hi || self.words.is_empty() {
            return Range {
                set: self,
                word: 1,
                last: 0,
                bits: 0,
                hi,
            };
        }
        let (word, last) = (
            ((lo - self.base) / 64) as usize,
            ((hi - self.base) / 64) as usize,
        );
        let start = self.base + 64 * word as u64;
        let bits = self.words[word] & (!0u64 << (lo - start));
        let mut r = Range {
            set: self,
            word,
            last,
            bits,
            hi,
        };
        r.clip();
        r
    }

    /// Every TSN, in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.range(0, u64::MAX)
    }
}

/// The TSNs of a [`TsnBits`] in a range, in order: one word at a time, its bits
/// lowest first.
pub(super) struct Range<'a> {
    set: &'a TsnBits,
    /// The word `bits` came from.
    word: usize,
    /// The last word in the range.
    last: usize,
    /// The bits of `word` not returned yet (within the range).
    bits: u64,
    /// The highest TSN in the range.
    hi: u64,
}

impl Range<'_> {
    /// Drops the bits of the current word above `hi` (in the last word only).
    fn clip(&mut self) {
        if self.word == self.last {
            let start = self.set.base + 64 * self.word as u64;
            self.bits &= !0u64 >> (start + 63 - self.hi);
        }
    }
}

impl Iterator for Range<'_> {
    type Item = u64;

    fn next(&mut self) -> Option<u64> {
        while self.bits == 0 {
            if self.word >= self.last {
                return None;
            }
            self.word += 1;
            self.bits = self.set.words[self.word];
            self.clip();
        }
        let b = self.bits.trailing_zeros() as u64;
        self.bits &= self.bits - 1;
        Some(self.set.base + 64 * self.word as u64 + b)
    }
}

impl PartialEq for TsnBits {
    fn eq(&self, o: &Self) -> bool {
        self.iter().eq(o.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A deterministic mix of inserts and removes around a moving window, checked
    /// against an ordered tree after every step.
    #[test]
    fn behaves_as_an_ordered_set() {
        let mut bits = TsnBits::default();
        let mut tree = BTreeSet::new();
        let mut x: u64 = 12345;
        for step in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let base = (1 << 32) + step / 4;
            let tsn = base + (x >> 33) % 300;
            if (x >> 20).is_multiple_of(3) {
                assert_eq!(bits.remove(tsn), tree.remove(&tsn), "remove {tsn}");
            } else {
                assert_eq!(bits.insert(tsn), tree.insert(tsn), "insert {tsn}");
            }
            assert_eq!(bits.first(), tree.first().copied());
            assert_eq!(bits.len(), tree.len());
            if step.is_multiple_of(97) {
                let lo = base + (x >> 40) % 200;
                let hi = lo + (x >> 50) % 150;
                assert!(
                    bits.range(lo, hi).eq(tree.range(lo..=hi).copied()),
                    "{lo}..={hi}"
                );
                assert!(bits.iter().eq(tree.iter().copied()));
            }
        }
    }

    #[test]
    fn ranges_at_word_edges_and_outside_the_window() {
        let mut b = TsnBits::default();
        for t in [63u64, 64, 127, 128, 200] {
            b.insert(t);
        }
        assert_eq!(b.range(64, 127).collect::<Vec<_>>(), [64, 127]);
        assert_eq!(b.range(0, 63).collect::<Vec<_>>(), [63]);
        assert_eq!(b.range(129, 199).count(), 0);
        assert_eq!(b.range(300, 400).count(), 0);
        assert_eq!(b.range(10, 5).count(), 0);
        assert!(b.remove(63) && !b.remove(63) && !b.remove(5));
        assert_eq!(b.first(), Some(64));
        for t in [64, 127, 128, 200] {
            b.remove(t);
        }
        assert_eq!((b.first(), b.iter().count()), (None, 0));
    }
}
