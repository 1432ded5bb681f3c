//! The receive-buffer bound (docs/metrics.md): the best goodput any scheduler
//! could reach on the scenario's paths with its receive buffer.
//!
//! Flow control caps the data outstanding on all paths together at `rbuf`. Path i
//! carries at most `c_i` (its bottleneck rate times the payload share of a full packet)
//! and needs a window of `c_i · RTT_i` to do so, so goodput is at most
//! `max Σ w_i/RTT_i` subject to `Σ w_i ≤ rbuf`, `w_i ≤ c_i·RTT_i`: fill paths in order of
//! RTT until their capacity or the buffer runs out. Loss is ignored, so this is an
//! upper bound, not a prediction.

/// One path's inputs to the bound.
#[derive(Clone, Debug, PartialEq)]
pub struct PathCapacity {
    /// Goodput capacity in bytes/s (bottleneck rate × payload efficiency).
    pub goodput_bps: f64,
    /// Base RTT in seconds (propagation both ways plus serialisation of one packet).
    pub rtt_s: f64,
}

/// The bound in bytes/s.
pub fn rbuf_bound(paths: &[PathCapacity], rbuf: f64) -> f64 {
    let mut sorted: Vec<&PathCapacity> = paths.iter().collect();
    sorted.sort_by(|a, b| a.rtt_s.total_cmp(&b.rtt_s));
    let mut window = rbuf;
    let mut rate = 0.0;
    for p in sorted {
        let need = p.goodput_bps * p.rtt_s;
        if need <= window {
            rate += p.goodput_bps;
            window -= need;
        } else {
            rate += window / p.rtt_s;
            break;
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffer_gives_total_capacity_small_buffer_fills_fast_path_first() {
        let paths = [
            PathCapacity {
                goodput_bps: 1e6,
                rtt_s: 0.2,
            },
            PathCapacity {
                goodput_bps: 2e6,
                rtt_s: 0.05,
            },
        ];
        assert_eq!(rbuf_bound(&paths, 1e9), 3e6);
        // 100 kB: the 50 ms path needs 100 kB for its 2 MB/s, nothing is left.
        assert_eq!(rbuf_bound(&paths, 100e3), 2e6);
        // 50 kB: half the fast path.
        assert_eq!(rbuf_bound(&paths, 50e3), 1e6);
        // 140 kB: fast path full, 40 kB over 0.2 s on the slow one.
        assert!((rbuf_bound(&paths, 140e3) - 2.2e6).abs() < 1e-6);
    }
}
