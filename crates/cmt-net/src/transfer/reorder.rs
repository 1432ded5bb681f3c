//! Reordering as the receiver sees it, in the simulator's terms: for every chunk handed
//! to the application, how long it waited in the receive buffer for an earlier one
//! (delivery time minus arrival time; 0 for a chunk that arrived in order) — the
//! mean, the 99th percentile and the maximum, the key `reordering_latency_ms` of the
//! simulator's `summary.json` — the share of chunks that waited, and the most bytes
//! held out of order at once. Memory stays constant however long the transfer: the
//! waits go into logarithmic buckets (16 per doubling, so a percentile is reported as
//! its bucket's upper edge, at most 4.4 % above the true value); mean and maximum are
//! exact.

use cmt_core::Duration;

/// Buckets per doubling of the wait.
const PER_DOUBLING: f64 = 16.0;
/// Buckets: 1 µs up to 2^30 µs (about 18 minutes); longer waits count in the last one.
const BUCKETS: usize = 30 * 16 + 1;

/// The waits seen so far.
#[derive(Clone, Debug)]
pub struct ReorderStats {
    /// Chunks delivered, and those among them that waited.
    chunks: u64,
    waited: u64,
    sum_ns: u128,
    max_ns: u64,
    /// Counts of the non-zero waits by bucket.
    buckets: Vec<u64>,
    /// The most bytes held out of order at once.
    held_peak: u32,
}

impl Default for ReorderStats {
    fn default() -> Self {
        ReorderStats {
            chunks: 0,
            waited: 0,
            sum_ns: 0,
            max_ns: 0,
            buckets: vec![0; BUCKETS],
            held_peak: 0,
        }
    }
}

/// The summary of [`ReorderStats`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reordering {
    /// Chunks delivered.
    pub chunks: u64,
    /// Share of them that waited for an earlier one.
    pub reordered_share: f64,
    /// Wait of a delivered chunk, ms: mean, 99th percentile (nearest rank; its bucket's
    /// upper edge), maximum.
    pub mean_ms: f64,
    /// See [`mean_ms`](Self::mean_ms).
    pub p99_ms: f64,
    /// See [`mean_ms`](Self::mean_ms).
    pub max_ms: f64,
    /// The most bytes held out of order at once.
    pub held_peak_bytes: u32,
}

fn bucket(ns: u64) -> usize {
    let us = (ns as f64 / 1e3).max(1.0);
    ((us.log2() * PER_DOUBLING).ceil() as usize).min(BUCKETS - 1)
}

fn upper_edge_ns(b: usize) -> f64 {
    (b as f64 / PER_DOUBLING).exp2() * 1e3
}

impl ReorderStats {
    /// A chunk was delivered after waiting `waited`.
    pub fn delivered(&mut self, waited: Duration) {
        let ns = waited.as_nanos();
        self.chunks += 1;
        if ns == 0 {
            return;
        }
        self.waited += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
        self.buckets[bucket(ns)] += 1;
    }

    /// `held` bytes are held out of order now.
    pub fn held(&mut self, held: u32) {
        self.held_peak = self.held_peak.max(held);
    }

    /// The summary, or `None` when nothing was delivered (the sending end).
    pub fn summary(&self) -> Option<Reordering> {
        if self.chunks == 0 {
            return None;
        }
        let n = self.chunks;
        let rank = ((n as f64 * 0.99).ceil() as u64).clamp(1, n);
        let zeros = n - self.waited;
        let p99_ns = match rank.checked_sub(zeros) {
            None | Some(0) => 0.0,
            Some(k) => {
                let mut seen = 0;
                let b = self.buckets.iter().position(|&c| {
                    seen += c;
                    seen >= k
                });
                b.map_or(self.max_ns as f64, |b| {
                    upper_edge_ns(b).min(self.max_ns as f64)
                })
            }
        };
        Some(Reordering {
            chunks: n,
            reordered_share: self.waited as f64 / n as f64,
            mean_ms: self.sum_ns as f64 / n as f64 / 1e6,
            p99_ms: p99_ns / 1e6,
            max_ms: self.max_ns as f64 / 1e6,
            held_peak_bytes: self.held_peak,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_order_delivery_is_no_reordering_and_nothing_delivered_is_none() {
        let mut r = ReorderStats::default();
        assert_eq!(r.summary(), None);
        for _ in 0..10 {
            r.delivered(Duration::ZERO);
        }
        let s = r.summary().unwrap();
        assert_eq!(
            (s.chunks, s.reordered_share, s.p99_ms, s.max_ms),
            (10, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn mean_and_max_are_exact_and_the_p99_within_its_bucket() {
        let mut r = ReorderStats::default();
        // 900 in order, 90 waited 2 ms, 10 waited 10 ms: the 99th of 1000 (rank 990)
        // is a 2 ms wait, the 991st a 10 ms one.
        for _ in 0..900 {
            r.delivered(Duration::ZERO);
        }
        for _ in 0..90 {
            r.delivered(Duration::from_millis(2));
        }
        for _ in 0..10 {
            r.delivered(Duration::from_millis(10));
        }
        r.held(5000);
        r.held(3000);
        let s = r.summary().unwrap();
        assert!((s.mean_ms - (90.0 * 2.0 + 10.0 * 10.0) / 1000.0).abs() < 1e-9);
        assert_eq!(s.max_ms, 10.0);
        assert!((2.0..=2.0 * 1.045).contains(&s.p99_ms), "{}", s.p99_ms);
        assert_eq!(s.reordered_share, 0.1);
        assert_eq!(s.held_peak_bytes, 5000);
        // One more 10 ms wait moves the 99th percentile there (rank 991 of 1001).
        r.delivered(Duration::from_millis(10));
        let s = r.summary().unwrap();
        assert!((10.0 / 1.045..=10.0).contains(&s.p99_ms), "{}", s.p99_ms);
    }
}
