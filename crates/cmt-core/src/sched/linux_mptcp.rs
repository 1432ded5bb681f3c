//! The scheduler upstream Linux MPTCP ships (`net/mptcp/protocol.c`,
//! `mptcp_subflow_get_send` and `__subflow_push_pending`, Linux 6.11 with "mptcp:
//! sched: check both directions for backup", 2024; docs/algorithms.md §9.4). Not the
//! out-of-tree multipath-tcp.org kernel's minRTT ([`MinRtt`](super::MinRtt)).
//!
//! Each active subflow's *linger time* is its queued bytes over its average pacing
//! rate — how long it would take to send what it already holds — and the new data goes
//! to the subflow with the least; backup subflows only when no other is active. If that
//! subflow cannot take data now, nothing is sent (the kernel returns no subflow rather
//! than a slower one: its BLEST-like guard). The chosen subflow then keeps the data for
//! a burst of up to `MPTCP_SEND_BURST_SIZE` (64 KiB less TCP, option, IPv6 and fragment
//! headers: 65,428 bytes, capped by the peer's window left) while it can send, and
//! its average pacing rate moves towards its current one, weighted by the burst
//! against what it had queued. A subflow's pacing rate is Linux's
//! `tcp_update_pacing_rate`: `ratio·max(cwnd, flight)/SRTT`, ratio 2 while cwnd is
//! below half of ssthresh and 1.2 after.
//!
//! Reconstruction (decision D37): queued bytes are the path's bytes in flight and, with
//! Linux's subflow write queues (`send_buffer = "linux"`), those waiting in its queue
//! (without them this core hands a chunk to a path only when it sends it, so a
//! subflow's socket queue is what it has in flight); a subflow "cannot take data" when
//! its window is full (with the write queues: when its buffer is); the
//! kernel's stale subflows (no progress for 4 retransmission intervals) are this core's
//! potentially failed and inactive paths, which the views already mark; a path without
//! an RTT sample lingers 0 s (Linux's pacing rate is unbounded before the first sample)
//! and keeps no average until it has one.

use super::{SchedContext, Scheduler};
use crate::view::{PathId, PathState, PathView};

/// `MPTCP_SEND_BURST_SIZE`: 65,536 − 20 (TCP header) − 40 (option space) − 40 (IPv6
/// header) − 8 (fragment header).
const SEND_BURST: u64 = 65_428;

/// Upstream Linux MPTCP's scheduler with its per-subflow average pacing rates and the
/// current burst.
#[derive(Clone, Debug)]
pub struct LinuxMptcp {
    /// Average pacing rate per path, bytes/s (0: none yet).
    avg_pacing: Vec<f64>,
    /// Bytes left in the current burst.
    burst: u64,
    /// The path the current burst goes to.
    last: Option<PathId>,
}

impl LinuxMptcp {
    /// The scheduler of an association of `num_paths` paths (more may be added).
    pub fn new(num_paths: usize) -> Self {
        LinuxMptcp {
            avg_pacing: vec![0.0; num_paths],
            burst: 0,
            last: None,
        }
    }
}

/// Linux's `tcp_update_pacing_rate`, bytes/s; `None` before the first RTT sample.
fn pacing_rate(p: &PathView) -> Option<f64> {
    let srtt = p.srtt?.as_secs_f64();
    if srtt <= 0.0 {
        return None;
    }
    let ratio = if p.cwnd < p.ssthresh / 2 { 2.0 } else { 1.2 };
    Some(ratio * p.cwnd.max(p.flight) as f64 / srtt)
}

impl LinuxMptcp {
    /// The active path with the least linger time (`mptcp_subflow_get_send`'s loop).
    fn least_linger(&mut self, paths: &[PathView]) -> Option<PathId> {
        // Paths added after the start (an address that appears) get their slot here.
        if self.avg_pacing.len() < paths.len() {
            self.avg_pacing.resize(paths.len(), 0.0);
        }
        let mut best: Option<(f64, PathId)> = None;
        for p in paths.iter().filter(|p| p.state == PathState::Active) {
            let linger = match pacing_rate(p) {
                Some(now) => {
                    // The average starts at the path's first pacing rate.
                    let avg = &mut self.avg_pacing[p.id.0];
                    if *avg == 0.0 {
                        *avg = now;
                    }
                    (p.flight + p.queued) as f64 / *avg
                }
                None => 0.0,
            };
            if best.is_none_or(|(b, _)| linger < b) {
                best = Some((linger, p.id));
            }
        }
        best.map(|(_, id)| id)
    }
}

impl Scheduler for LinuxMptcp {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let view = |id: PathId| ctx.paths.get(id.0);
        // `__subflow_push_pending` keeps filling the chosen subflow while the burst
        // lasts and the subflow takes data.
        if let Some(last) = self.last {
            if self.burst > 0
                && view(last).is_some_and(|v| v.can_send && v.state == PathState::Active)
            {
                return Some(last);
            }
            self.last = None;
        }
        let best = self.least_linger(ctx.paths)?;
        let v = view(best)?;
        if !v.can_send {
            return None;
        }
        let burst = SEND_BURST.min(ctx.peer_rwnd);
        if burst > 0 {
            if let (Some(avg), Some(now)) = (self.avg_pacing.get_mut(best.0), pacing_rate(v)) {
                let queued = (v.flight + v.queued) as f64;
                *avg = (*avg * queued + now * burst as f64) / (burst as f64 + queued);
            }
            self.burst = burst;
            self.last = Some(best);
        }
        Some(best)
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, bytes: u32) {
        if self.last == Some(path) {
            self.burst = self.burst.saturating_sub(u64::from(bytes));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    fn sched(n: usize) -> Box<dyn Scheduler> {
        Box::new(LinuxMptcp::new(n))
    }

    #[test]
    fn the_path_that_would_empty_its_queue_soonest_gets_the_burst() {
        // Path 0: 30 KB in flight at 60 KB cwnd / 20 ms (pacing 1.2·60 KB/0.02 s =
        // 3.6 MB/s: 8.3 ms to drain). Path 1: 10 KB at 20 KB / 100 ms (0.24 MB/s:
        // 42 ms). Path 0, although path 1 has more room relative to its window.
        let paths = [
            view(0, 60_000, 30_000, 20, true),
            view(1, 20_000, 10_000, 100, true),
        ];
        let mut s = sched(2);
        assert_eq!(s.select(&ctx(&paths)), Some(PathId(0)));
        // Linger never exceeds SRTT/1.2 (the rate counts max(cwnd, flight)): a full
        // path 0 lingers 16.7 ms, and a path 1 of 100 ms with 1 KB queued (4.2 ms)
        // wins — the slow path takes data while it has little queued.
        let heavy = [
            view(0, 60_000, 60_000, 20, true),
            view(1, 20_000, 1_000, 100, true),
        ];
        assert_eq!(sched(2).select(&ctx(&heavy)), Some(PathId(1)));
    }

    #[test]
    fn a_burst_of_64_kib_stays_on_its_path_then_the_choice_is_made_again() {
        let mut paths = [view(0, 200_000, 0, 20, true), view(1, 200_000, 0, 20, true)];
        let mut s = sched(2);
        // 45 chunks of 1,452 bytes are 65,340 < 65,428: a 46th starts the burst's last
        // 88 bytes, so 46 go to path 0 although its queue grows past path 1's from the
        // first; then path 1, now lingering least, gets the next burst.
        let mut on_zero = 0;
        let next = loop {
            let p = s.select(&ctx(&paths)).unwrap();
            if p != PathId(0) {
                break p;
            }
            on_zero += 1;
            paths[0].flight += 1452;
            s.on_sent(p, on_zero, 1452);
            assert!(on_zero < 100, "the burst ends");
        };
        assert_eq!((on_zero, next), (46, PathId(1)));
        // A burst also ends when its path's window fills.
        let mut s = sched(2);
        let mut paths = [
            view(0, 200_000, 0, 20, true),
            view(1, 200_000, 100, 20, true),
        ];
        assert_eq!(s.select(&ctx(&paths)), Some(PathId(0)));
        s.on_sent(PathId(0), 1, 1452);
        paths[0].flight = 200_000;
        paths[0].can_send = false;
        assert_eq!(s.select(&ctx(&paths)), Some(PathId(1)));
    }

    #[test]
    fn a_path_added_after_the_start_gets_an_average_pacing_rate() {
        let mut s = sched(1);
        let two = [
            view(0, 60_000, 30_000, 20, true),
            view(1, 60_000, 0, 20, true),
        ];
        assert_eq!(s.select(&ctx(&two)), Some(PathId(1)));
        // The new path's burst began with its own pacing rate as its average.
        let mut s = LinuxMptcp::new(1);
        s.select(&ctx(&two));
        assert_eq!(s.avg_pacing, [1.2 * 60_000.0 / 0.02; 2]);
    }

    #[test]
    fn the_best_path_without_room_means_waiting_not_a_slower_path() {
        // Path 0 lingers least (nothing queued) but its window is full (can_send false
        // with flight 0 models a Max.Burst stop): nothing is sent.
        let paths = [
            view(0, 60_000, 0, 20, false),
            view(1, 60_000, 50_000, 200, true),
        ];
        assert_eq!(sched(2).select(&ctx(&paths)), None);
    }

    #[test]
    fn backup_and_failed_paths_are_not_candidates() {
        let mut paths = [
            view(0, 60_000, 0, 20, true),
            view(1, 60_000, 50_000, 200, true),
        ];
        for state in [
            PathState::Standby,
            PathState::PotentiallyFailed,
            PathState::Inactive,
        ] {
            paths[0].state = state;
            assert_eq!(
                sched(2).select(&ctx(&paths)),
                Some(PathId(1)),
                "path 0 {state:?}"
            );
        }
    }

    #[test]
    fn the_average_pacing_rate_moves_towards_the_current_one_weighted_by_the_burst() {
        // Path 0 first chosen with nothing queued: its average is the current rate.
        let mut s = LinuxMptcp::new(1);
        let p = [view(0, 60_000, 0, 20, true)];
        s.select(&ctx(&p));
        assert_eq!(s.avg_pacing[0], 1.2 * 60_000.0 / 0.02);
        // Then the window doubles (in slow start: cwnd < ssthresh / 2, ratio 2) with
        // 65,428 bytes queued: avg = (avg·q + now·burst)/(burst + q) = the mean.
        s.burst = 0;
        let mut v = view(0, 120_000, SEND_BURST, 20, true);
        v.ssthresh = 1 << 30;
        s.select(&ctx(&[v]));
        let (old, now) = (3.6e6, 2.0 * 120_000.0 / 0.02);
        assert!((s.avg_pacing[0] - (old + now) / 2.0).abs() < 1e-6);
    }
}
