//! Capacity traces in the Mahimahi format (Winstein et al., NSDI 2013): one line per
//! 1500-byte delivery opportunity, the time in milliseconds; several lines with the same
//! time are several opportunities; the trace repeats with a period equal to its last
//! time. Opportunities that find the queue empty are wasted.

use std::sync::Arc;

use cmt_core::{Duration, Time};

/// Bytes one opportunity can deliver.
pub const OPPORTUNITY_BYTES: u32 = 1500;

/// A parsed trace (shared by both directions and by copies of a scenario).
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    ms: Arc<Vec<u64>>,
    period_ms: u64,
}

impl Trace {
    /// A fingerprint of the trace's contents (FNV-1a of its delivery times), for
    /// provenance: the same path with other contents gives another one.
    pub fn fingerprint(&self) -> u64 {
        let mut h = crate::build_info::FNV_START;
        for x in self.ms.iter().chain([&self.period_ms]) {
            crate::build_info::fnv1a(&mut h, &x.to_le_bytes());
        }
        h
    }

    /// Parses trace text; the error names the line.
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let t: u64 = line.parse().map_err(|_| {
                format!(
                    "line {}: `{line}` is not a whole number of milliseconds",
                    i + 1
                )
            })?;
            if ms.last().is_some_and(|&p| t < p) {
                return Err(format!(
                    "line {}: {t} ms is earlier than the line before",
                    i + 1
                ));
            }
            ms.push(t);
        }
        let period_ms = *ms.last().ok_or("the trace has no delivery opportunities")?;
        if period_ms == 0 {
            return Err("the trace must end after 0 ms (its last time is its period)".into());
        }
        Ok(Trace {
            ms: Arc::new(ms),
            period_ms,
        })
    }

    /// Mean capacity in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        self.ms.len() as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / (self.period_ms as f64 / 1000.0)
    }

    /// Mean capacity in bits per second over the first `window` of the trace (the
    /// opportunities at times in `[0, window)`, the trace repeating as it does on a link):
    /// what a run of that length is actually offered, which for a short run on a long
    /// trace can be far from the whole trace's mean.
    pub fn mean_rate_bps_over(&self, window: Duration) -> f64 {
        let secs = window.as_secs_f64();
        if secs <= 0.0 {
            return self.mean_rate_bps();
        }
        let period_ns = self.period_ms * 1_000_000;
        let cycles = window.as_nanos() / period_ns;
        let rest_ns = window.as_nanos() % period_ns;
        let partial = self.ms.partition_point(|&t| t * 1_000_000 < rest_ns) as u64;
        let opportunities = cycles * self.ms.len() as u64 + partial;
        opportunities as f64 * OPPORTUNITY_BYTES as f64 * 8.0 / secs
    }

    fn at(&self, cycle: u64, i: usize) -> Time {
        Time::ZERO + Duration::from_millis(cycle * self.period_ms + self.ms[i])
    }
}

/// Position in a trace and unused credit of the last opportunity.
#[derive(Clone, Debug)]
pub struct TraceCursor {
    trace: Trace,
    cycle: u64,
    next: usize,
    credit: u32,
    credit_at: Time,
}

impl TraceCursor {
    /// At the start of the trace.
    pub fn new(trace: Trace) -> Self {
        TraceCursor {
            trace,
            cycle: 0,
            next: 0,
            credit: 0,
            credit_at: Time::ZERO,
        }
    }

    fn advance(&mut self) -> Time {
        let t = self.trace.at(self.cycle, self.next);
        self.next += 1;
        if self.next == self.trace.ms.len() {
            self.next = 0;
            self.cycle += 1;
        }
        t
    }

    /// A packet of `size` bytes starts service at `now`: the time of the opportunity
    /// that pays its last byte.
    pub fn serve(&mut self, now: Time, size: u32) -> Time {
        let mut need = size;
        if self.credit_at == now && self.credit > 0 {
            let used = self.credit.min(need);
            self.credit -= used;
            need -= used;
            if need == 0 {
                return now;
            }
        }
        loop {
            let t = self.advance();
            if t < now {
                continue; // passed while the queue was empty: wasted
            }
            let used = OPPORTUNITY_BYTES.min(need);
            need -= used;
            self.credit = OPPORTUNITY_BYTES - used;
            self.credit_at = t;
            if need == 0 {
                return t;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Time {
        Time::ZERO + Duration::from_millis(x)
    }

    #[test]
    fn full_packets_leave_exactly_at_the_opportunities_and_the_trace_repeats() {
        let mut c = TraceCursor::new(Trace::parse("5\n5\n10\n20\n").unwrap());
        let mut now = ms(0);
        let mut out = Vec::new();
        for _ in 0..8 {
            now = c.serve(now, 1500);
            out.push(now);
        }
        let want: Vec<Time> = [5, 5, 10, 20, 25, 25, 30, 40].into_iter().map(ms).collect();
        assert_eq!(out, want);
    }

    #[test]
    fn small_packets_share_an_opportunity_and_big_ones_span_several() {
        let mut c = TraceCursor::new(Trace::parse("1\n2\n3\n4\n").unwrap());
        assert_eq!(c.serve(ms(0), 500), ms(1));
        assert_eq!(c.serve(ms(1), 500), ms(1));
        assert_eq!(c.serve(ms(1), 600), ms(2)); // 500 left at 1 ms, 100 more at 2 ms
        assert_eq!(c.serve(ms(2), 3000), ms(4));
        // The queue was empty from 4 to 9 ms: the opportunities at 5–8 ms are wasted.
        assert_eq!(c.serve(ms(9), 1500), ms(2 * 4 + 1)); // cycle 2 starts at 8 ms
    }

    #[test]
    fn the_rate_over_a_window_counts_only_the_opportunities_inside_it() {
        // Period 1000 ms: a burst of 8 opportunities in the first 100 ms, 2 later.
        let text = "10\n20\n30\n40\n50\n60\n70\n80\n900\n1000\n";
        let t = Trace::parse(text).unwrap();
        let per_op = 1500.0 * 8.0;
        assert_eq!(t.mean_rate_bps(), 10.0 * per_op);
        // The first 100 ms hold 8 opportunities: 8 × 12 kbit / 0.1 s.
        let w = Duration::from_millis(100);
        assert!((t.mean_rate_bps_over(w) - 8.0 * per_op / 0.1).abs() < 1e-6);
        // 2.5 periods: 2 × 10 + 8 opportunities over 2.5 s.
        let w = Duration::from_millis(2500);
        assert!((t.mean_rate_bps_over(w) - 28.0 * per_op / 2.5).abs() < 1e-6);
        // Whole periods give the trace's mean.
        let w = Duration::from_secs(3);
        assert!((t.mean_rate_bps_over(w) - t.mean_rate_bps()).abs() < 1e-6);
    }

    #[test]
    fn bad_traces_name_the_line() {
        assert!(Trace::parse("1\nx\n").unwrap_err().starts_with("line 2"));
        assert!(Trace::parse("5\n3\n").unwrap_err().contains("earlier"));
        assert!(Trace::parse("").is_err());
        assert_eq!(
            Trace::parse("0\n0\n1000\n").unwrap().mean_rate_bps(),
            3.0 * 1500.0 * 8.0
        );
    }
}
