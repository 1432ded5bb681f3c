//! Reordering as the receiver sees it, in the simulator's terms: for every chunk handed
//! to the application, how long it waited in the receive buffer for an earlier one
//! (delivery time minus arrival time; 0 for a chunk that arrived in order) — the
//! mean, the 99th percentile and the maximum, the key `reordering_latency_ms` of the
//! simulator's `summary.json` — the share of chunks that waited, and the most bytes
//! held out of order at once. Memory stays constant however long the transfer: the
//! waits go into an HDR histogram (two significant digits, so a percentile is reported
//! as its bucket's upper edge, at most 1 % above the true value); mean and maximum are
//! exact.

use cmt_core::Duration;
use hdrhistogram::Histogram;

/// The longest wait the histogram tells apart, µs (about 71 minutes; longer ones count
/// as this long).
const LONGEST_US: u64 = 1 << 32;

/// The waits seen so far.
#[derive(Clone, Debug)]
pub struct ReorderStats {
    /// Every delivered chunk's wait, µs.
    waits: Histogram<u64>,
    /// Chunks that waited at all.
    waited: u64,
    sum_ns: u128,
    max_ns: u64,
    /// The most bytes held out of order at once.
    held_peak: u32,
}

impl Default for ReorderStats {
    fn default() -> Self {
        ReorderStats {
            waits: Histogram::new_with_bounds(1, LONGEST_US, 2).expect("valid bounds"),
            waited: 0,
            sum_ns: 0,
            max_ns: 0,
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
    /// Wait of a delivered chunk, ms: mean, 99th percentile (its bucket's upper edge,
    /// at most the maximum), maximum.
    pub mean_ms: f64,
    /// See [`mean_ms`](Self::mean_ms).
    pub p99_ms: f64,
    /// See [`mean_ms`](Self::mean_ms).
    pub max_ms: f64,
    /// The most bytes held out of order at once.
    pub held_peak_bytes: u32,
}

impl ReorderStats {
    /// A chunk was delivered after waiting `waited`.
    pub fn delivered(&mut self, waited: Duration) {
        let ns = waited.as_nanos();
        self.waits.saturating_record(ns / 1_000);
        if ns == 0 {
            return;
        }
        self.waited += 1;
        self.sum_ns += u128::from(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// `held` bytes are held out of order now.
    pub fn held(&mut self, held: u32) {
        self.held_peak = self.held_peak.max(held);
    }

    /// The summary, or `None` when nothing was delivered (the sending end).
    pub fn summary(&self) -> Option<Reordering> {
        let n = self.waits.len();
        if n == 0 {
            return None;
        }
        let p99_ns = match self.waits.value_at_quantile(0.99) {
            0 => 0.0,
            us => (self.waits.highest_equivalent(us) as f64 * 1e3).min(self.max_ns as f64),
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
