//! The receiver's out-of-order TSNs as runs of consecutive TSNs, so that a SACK's gap
//! blocks (RFC 9260 §3.3.4) are read off in time proportional to the blocks reported,
//! not to the chunks held.
//!
//! The runs sit in order in a double-ended array: a chunk from the fastest path extends
//! or follows the last run, one from a slower path fills a hole near the first, so an
//! insertion moves few runs and never allocates (a tree allocated a node per run).

use std::collections::VecDeque;

/// Disjoint, non-adjacent runs `start ..= end` of TSNs, in order.
#[derive(Debug, Default)]
pub(super) struct TsnRuns {
    runs: VecDeque<(u64, u64)>,
}

impl TsnRuns {
    /// Adds `tsn`, which must not be in a run yet, merging with the runs it touches.
    pub(super) fn insert(&mut self, tsn: u64) {
        match self.runs.back_mut() {
            Some((_, end)) if *end + 1 == tsn => {
                *end = tsn;
                return;
            }
            Some(&mut (_, end)) if end + 1 < tsn => {
                self.runs.push_back((tsn, tsn));
                return;
            }
            None => {
                self.runs.push_back((tsn, tsn));
                return;
            }
            Some(_) => {}
        }
        // Below the last run: the first run that starts after `tsn`, and its neighbour.
        let i = self.runs.partition_point(|&(start, _)| start <= tsn);
        let joins_before = i > 0 && self.runs[i - 1].1 + 1 == tsn;
        let joins_after = i < self.runs.len() && self.runs[i].0 == tsn + 1;
        match (joins_before, joins_after) {
            (true, true) => {
                self.runs[i - 1].1 = self.runs[i].1;
                self.runs.remove(i);
            }
            (true, false) => self.runs[i - 1].1 = tsn,
            (false, true) => self.runs[i].0 = tsn,
            (false, false) => self.runs.insert(i, (tsn, tsn)),
        }
    }

    /// Removes the runs that end at or below `cum` (delivered in order).
    pub(super) fn remove_through(&mut self, cum: u64) {
        while self.runs.front().is_some_and(|&(_, end)| end <= cum) {
            self.runs.pop_front();
        }
    }

    /// The runs in TSN order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.runs.iter().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Any order of insertions gives the runs of the set, as a scan of the sorted
        /// TSNs finds them; removing through any point keeps the runs above it.
        #[test]
        fn runs_are_the_maximal_consecutive_stretches(
            tsns in proptest::collection::btree_set(0u64..200, 0..120),
            order in any::<u64>(),
            cut in 0u64..220,
        ) {
            let mut shuffled: Vec<u64> = tsns.iter().copied().collect();
            // A deterministic shuffle from `order`.
            let mut x = order | 1;
            for i in (1..shuffled.len()).rev() {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17;
                shuffled.swap(i, (x % (i as u64 + 1)) as usize);
            }
            let mut runs = TsnRuns::default();
            for &t in &shuffled {
                runs.insert(t);
            }
            let mut want: Vec<(u64, u64)> = Vec::new();
            for &t in &tsns {
                match want.last_mut() {
                    Some((_, e)) if *e + 1 == t => *e = t,
                    _ => want.push((t, t)),
                }
            }
            prop_assert_eq!(runs.iter().collect::<Vec<_>>(), want.clone());
            runs.remove_through(cut);
            let kept: Vec<(u64, u64)> = want.into_iter().filter(|&(_, e)| e > cut).collect();
            prop_assert_eq!(runs.iter().collect::<Vec<_>>(), kept);
        }
    }
}
