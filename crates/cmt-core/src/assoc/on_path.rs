//! An index of the send queue by path: per path, the TSNs whose latest transmission
//! went on it and that are not acknowledged yet, first transmissions and
//! retransmissions apart.
//!
//! SACK processing asks per path for "the earliest chunk outstanding" (T3-rtx rule
//! R3), "the earliest first transmission / retransmission not yet acked" (CUC's
//! pseudo-cumacks, Iyengar et al., ToN 2006) and "the chunks below the highest TSN
//! newly acked" (missing reports with SFR); a gap block asks for the chunks in it not
//! acked before. With this index each answer costs what it returns (plus a logarithm),
//! not a walk over everything outstanding — which on paths of unequal delay can be
//! thousands of chunks held out of order.

use std::ops::{Bound, RangeBounds};

use super::tsn_bits::TsnBits;
use crate::view::PathId;

/// Per path: unacknowledged TSNs sent once (`fresh`) and sent more than once
/// (`resent`), each in TSN order.
#[derive(Debug, Default)]
pub(super) struct OnPath {
    fresh: Vec<TsnBits>,
    resent: Vec<TsnBits>,
}

impl OnPath {
    pub(super) fn new(num_paths: usize) -> Self {
        OnPath {
            fresh: vec![TsnBits::default(); num_paths],
            resent: vec![TsnBits::default(); num_paths],
        }
    }

    fn set(&mut self, path: PathId, tx_count: u32) -> &mut TsnBits {
        if tx_count == 1 {
            &mut self.fresh[path.0]
        } else {
            &mut self.resent[path.0]
        }
    }

    /// `tsn` was transmitted on `path` for the `tx_count`-th time.
    pub(super) fn add(&mut self, path: PathId, tsn: u64, tx_count: u32) {
        if tx_count > 0 {
            self.set(path, tx_count).insert(tsn);
        }
    }

    /// `tsn`, last sent on `path` for the `tx_count`-th time, was acknowledged or is
    /// being sent again.
    pub(super) fn remove(&mut self, path: PathId, tsn: u64, tx_count: u32) {
        if tx_count > 0 {
            self.set(path, tx_count).remove(tsn);
        }
    }

    /// The lowest unacknowledged TSN sent once on `path` (CUC's expected pseudo-cumack).
    #[inline]
    pub(super) fn first_fresh(&self, path: PathId) -> Option<u64> {
        self.fresh[path.0].first()
    }

    /// The lowest unacknowledged TSN retransmitted on `path` (the expected rtx
    /// pseudo-cumack).
    #[inline]
    pub(super) fn first_resent(&self, path: PathId) -> Option<u64> {
        self.resent[path.0].first()
    }

    /// The lowest unacknowledged TSN last sent on `path`.
    #[inline]
    pub(super) fn first(&self, path: PathId) -> Option<u64> {
        lowest(self.first_fresh(path), self.first_resent(path))
    }

    /// The unacknowledged TSNs last sent on `path` within `range`, in TSN order.
    pub(super) fn on<R: RangeBounds<u64>>(
        &self,
        path: PathId,
        range: R,
    ) -> impl Iterator<Item = u64> + '_ {
        let lo = match range.start_bound() {
            Bound::Included(&t) => t,
            Bound::Excluded(&t) => t.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let hi = match range.end_bound() {
            Bound::Included(&t) => Some(t),
            Bound::Excluded(&t) => t.checked_sub(1),
            Bound::Unbounded => Some(u64::MAX),
        };
        // `..0` holds nothing: an empty range.
        let (lo, hi) = hi.map_or((1, 0), |hi| (lo, hi));
        merge(
            self.fresh[path.0].range(lo, hi),
            self.resent[path.0].range(lo, hi),
        )
    }

    /// Appends the unacknowledged TSNs last sent on `path` below `below` to `out`, in
    /// TSN order (the missing-report candidates of a path), given the path's lowest
    /// such TSN `lo` ([`first`](Self::first)): the path's two sets' words are OR-ed, 64
    /// TSNs at a time, from `lo` on — nothing at all when `lo` is not below `below`,
    /// the usual case while acks come in order.
    #[inline]
    pub(super) fn push_below(&self, path: PathId, lo: u64, below: u64, out: &mut Vec<u64>) {
        if lo >= below {
            return;
        }
        let (fresh, resent) = (&self.fresh[path.0], &self.resent[path.0]);
        let hi = below - 1;
        let mut start = lo & !63;
        while start <= hi {
            let bits = fresh.word_at(start) | resent.word_at(start);
            push_bits(bits, start, lo, hi, out);
            start += 64;
        }
    }

    /// Appends every unacknowledged TSN last sent on `path` below `below` to `out`, in
    /// TSN order (what RACK and QUIC judge on a path).
    pub(super) fn push_all(&self, path: PathId, below: u64, out: &mut Vec<u64>) {
        if let Some(lo) = self.first(path) {
            self.push_below(path, lo, below, out);
        }
    }

    /// Checks the index against the send queue it indexes (debug builds: every SACK of
    /// every test): each sent, unacknowledged chunk — `unacked` gives its path, TSN and
    /// transmission count — is under its path and count, and nothing else is.
    #[cfg(debug_assertions)]
    pub(super) fn check(&self, unacked: impl Iterator<Item = (PathId, u64, u32)>) {
        let mut want = OnPath::new(self.fresh.len());
        for (path, tsn, tx_count) in unacked {
            want.add(path, tsn, tx_count);
        }
        assert_eq!(self.fresh, want.fresh, "first transmissions by path");
        assert_eq!(self.resent, want.resent, "retransmissions by path");
    }

    /// Appends the unacknowledged TSNs of every path within `lo ..= hi` to `out`, in
    /// TSN order: the sets' words are OR-ed, 64 TSNs at a time.
    pub(super) fn all_in(&self, lo: u64, hi: u64, out: &mut Vec<u64>) {
        let sets = || self.fresh.iter().chain(&self.resent);
        if lo <= hi && lo / 64 == hi / 64 {
            // One word (the usual gap block): read it from every set at once.
            let start = lo & !63;
            let bits = sets().fold(0, |w, s| w | s.word_at(start));
            push_bits(bits, start, lo, hi, out);
            return;
        }
        let Some((first, last)) = sets()
            .filter_map(TsnBits::span)
            .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
        else {
            return;
        };
        let (lo, hi) = (lo.max(first), hi.min(last));
        if lo > hi {
            return;
        }
        let mut start = lo & !63;
        while start <= hi {
            let bits = sets().fold(0, |w, s| w | s.word_at(start));
            push_bits(bits, start, lo, hi, out);
            match start.checked_add(64) {
                Some(next) => start = next,
                None => break,
            }
        }
    }
}

/// Appends the TSNs of `bits` (bit `i` is TSN `start + i`, `start` a multiple of 64
/// within 63 of `hi`) that lie within `lo ..= hi`.
fn push_bits(mut bits: u64, start: u64, lo: u64, hi: u64, out: &mut Vec<u64>) {
    if start < lo {
        bits &= !0u64 << (lo - start);
    }
    if hi - start < 63 {
        bits &= !0u64 >> (63 - (hi - start));
    }
    while bits != 0 {
        out.push(start + bits.trailing_zeros() as u64);
        bits &= bits - 1;
    }
}

/// The lower of two lowest TSNs, either possibly absent (a path's lowest first
/// transmission and lowest retransmission).
#[inline]
pub(super) fn lowest(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Two ascending iterators as one.
fn merge(a: impl Iterator<Item = u64>, b: impl Iterator<Item = u64>) -> impl Iterator<Item = u64> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(&x), Some(&y)) if y < x => b.next(),
        (Some(_), _) => a.next(),
        (None, _) => b.next(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_each_paths_tsns_in_order_across_first_sends_and_resends() {
        let mut o = OnPath::new(2);
        for (tsn, path) in [(10, 0), (11, 1), (12, 0), (13, 1), (14, 0)] {
            o.add(PathId(path), tsn, 1);
        }
        // 12 is lost on path 0 and resent on path 1; 10 is acked.
        o.remove(PathId(0), 12, 1);
        o.add(PathId(1), 12, 2);
        o.remove(PathId(0), 10, 1);
        assert_eq!(o.on(PathId(0), ..).collect::<Vec<_>>(), [14]);
        assert_eq!(o.on(PathId(1), ..).collect::<Vec<_>>(), [11, 12, 13]);
        assert_eq!(o.on(PathId(1), ..13).collect::<Vec<_>>(), [11, 12]);
        assert_eq!(o.first_fresh(PathId(1)), Some(11));
        assert_eq!(o.first_resent(PathId(1)), Some(12));
        assert_eq!(o.first_resent(PathId(0)), None);
        assert_eq!(o.first(PathId(1)), Some(11));
        assert_eq!(o.first(PathId(0)), Some(14));
        let mut below = Vec::new();
        o.push_below(PathId(1), 11, 13, &mut below);
        assert_eq!(below, [11, 12]);
        o.push_below(PathId(0), 14, 14, &mut below);
        assert_eq!(below, [11, 12], "nothing of path 0 below 14");
        let mut all = Vec::new();
        o.all_in(12, 14, &mut all);
        assert_eq!(all, [12, 13, 14], "in TSN order across paths");
        // A chunk never sent (tx_count 0) is not indexed.
        o.add(PathId(0), 20, 0);
        assert_eq!(o.on(PathId(0), 15..).count(), 0);
    }

    /// Every path's TSNs in a range come out once each and in order, as a sorted merge
    /// of the paths' own lists would give them, for ranges at and across word edges.
    #[test]
    fn all_in_is_the_sorted_union_of_the_paths() {
        let mut o = OnPath::new(3);
        let mut x: u64 = 7;
        for tsn in 1000..1400u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if (x >> 60) < 12 {
                o.add(
                    PathId((x >> 33) as usize % 3),
                    tsn,
                    1 + (x >> 40) as u32 % 2,
                );
            }
        }
        for (lo, hi) in [
            (0, 5000),
            (1000, 1063),
            (1063, 1064),
            (1100, 1300),
            (1399, 1399),
            (1300, 1200),
        ] {
            let mut got = Vec::new();
            o.all_in(lo, hi, &mut got);
            let mut want: Vec<u64> = (0..3).flat_map(|p| o.on(PathId(p), lo..=hi)).collect();
            want.sort_unstable();
            assert_eq!(got, want, "{lo}..={hi}");
        }
        // A path's TSNs below a bound, at and across word edges, as its own list says.
        for p in 0..3 {
            for below in [0, 1000, 1001, 1063, 1064, 1065, 1200, 1399, 1400, 5000] {
                let mut got = vec![7];
                if let Some(lo) = o.first(PathId(p)) {
                    o.push_below(PathId(p), lo, below, &mut got);
                }
                let want: Vec<u64> = std::iter::once(7).chain(o.on(PathId(p), ..below)).collect();
                assert_eq!(got, want, "path {p} below {below}");
            }
        }
    }
}
