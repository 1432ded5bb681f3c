//! What one standard loss-reacting sender (SCTP's AIMD "Reno" with SACK-based loss
//! recovery) sustains on a path with random loss: the per-path rate of the
//! congestion-control-aware bound (docs/metrics.md, where the derivation is written out).
//!
//! A renewal model in the manner of Padhye, Firoiu, Towsley and Kurose ("Modeling TCP
//! throughput: a simple model and its empirical validation", SIGCOMM 1998), with the two
//! changes SACK-based recovery needs:
//!
//! * **Loss episodes, not lost packets, halve the window.** Losses among the window in
//!   flight when a loss is detected are repaired in the same fast recovery, so a cycle of
//!   congestion avoidance (window W/2 → W, one packet more per round trip, 3W²/8 packets)
//!   ends at the first loss after the previous episode's window: 3W²/8 = 1/e + W, with
//!   e the per-packet rate at which loss episodes start.
//! * **Timeouts come from lost retransmissions**, not from too few duplicate
//!   acknowledgements (Padhye's min(1, 3/W) fits Reno without SACK): an episode with k
//!   lost chunks times out with probability Q = 1 − (1 − p_r)^k, k = p/e + p·W, p_r the
//!   loss probability of a retransmission. While the
//!   lost retransmission waits for its RTO, the sender goes on sending new data at the
//!   halved window (less the chunks stuck in flight) as long as the receive buffer holds
//!   what arrives behind the hole; then slow start to W/4 and congestion avoidance.
//!
//! The expected back-off of repeated timeouts is Padhye's f(p)·RTO.
//!
//! **CMT's window growth during recovery.** With CMT's cwnd update for CMT (CUC, Iyengar
//! et al. 2006) a path's window grows whenever its own pseudo-cumack advances, not only
//! when the association's cumulative ack does; once the lost chunk is retransmitted on
//! another path, the path's pre-cut flight, acknowledged during the recovery round trip,
//! adds one MSS at once, and the window keeps growing through recovery. A cycle then runs
//! from W/2 + 1 to W in W/2 − 1 round trips. On two paths with 1 % loss this makes each
//! path ≈ 9 % faster than one Reno sender, in ns-2.35's CMT module as in this simulator
//! (docs/metrics.md); a bound has to allow it.
//!
//! **The start-up** ([`startup_excess`]): what slow start and the cycles that settle from
//! its overshoot send beyond the steady rate, which the bound spreads over a run's length.

/// One path's inputs.
#[derive(Clone, Debug, PartialEq)]
pub struct RenoPath {
    /// Round-trip time without queueing, seconds.
    pub rtt_s: f64,
    /// The retransmission timeout the sender would use, seconds.
    pub rto_s: f64,
    /// User data per packet, bytes.
    pub mss_bytes: f64,
    /// Probability that a packet (a retransmission included) is lost.
    pub packet_loss: f64,
    /// Per-packet probability that a loss episode starts (equal to `packet_loss` for
    /// independent losses; smaller for bursty loss, whose bursts are single episodes).
    pub episode_rate: f64,
    /// Probability that a retransmission is lost: `packet_loss` on a single path; in a
    /// multipath association, where a retransmission may take another path, the least
    /// lossy path's (the most favourable case, as a bound should take).
    pub retransmission_loss: f64,
    /// The receive buffer, bytes (what may arrive behind a hole).
    pub rbuf_bytes: f64,
    /// Whether the window grows during fast recovery (CMT's CUC with the retransmission
    /// on another path; see the module documentation).
    pub grows_in_recovery: bool,
    /// The initial window, packets (RFC 4960 §7.2.1: 4380 bytes of a 1500-byte MTU).
    pub initial_window: f64,
}

impl RenoPath {
    /// The per-packet rate at which loss episodes start (never above the loss `p`; `p`
    /// when not given) and how many packets above W/2 a cycle starts (1 when the window
    /// grows during recovery, else 0).
    fn cycle_inputs(&self, p: f64) -> (f64, f64) {
        let e = if self.episode_rate > 0.0 {
            self.episode_rate.min(p)
        } else {
            p
        };
        (e, if self.grows_in_recovery { 1.0 } else { 0.0 })
    }
}

/// Padhye et al.'s expected length of a timeout sequence in units of the first RTO
/// (each further loss of the retransmission doubles the wait, up to 64 ×).
fn backoff(p: f64) -> f64 {
    1.0 + p
        + 2.0 * p.powi(2)
        + 4.0 * p.powi(3)
        + 8.0 * p.powi(4)
        + 16.0 * p.powi(5)
        + 32.0 * p.powi(6)
}

/// The window (packets) at which a congestion-avoidance cycle ends, for a cycle that
/// starts `g` packets above W/2 and grows one packet per round trip: the packets of the
/// cycle, (W/2 − g)(3W/4 + g/2), equal 1/e + W. With g = 0, 3W²/8 = 1/e + W.
fn cycle_window(e: f64, g: f64) -> f64 {
    let b = 1.0 + g / 2.0;
    (b + (b * b + 1.5 * (g * g / 2.0 + 1.0 / e)).sqrt()) / 0.75
}

/// Packets sent while a lost retransmission waits `rto_s`: the halved window less the
/// stuck retransmission, shrinking as further retransmissions are lost (each packet
/// adds a stuck one with probability p·p_r), and no more than the receive buffer holds
/// beyond the window.
fn sent_while_waiting(w: f64, m: &RenoPath, p_r: f64) -> f64 {
    let stuck = m.packet_loss * p_r;
    let w0 = (w / 2.0 - 1.0).max(0.0);
    let rounds = m.rto_s / m.rtt_s;
    let fluid = if stuck > 0.0 {
        w0 / stuck * (1.0 - (-stuck * rounds).exp())
    } else {
        w0 * rounds
    };
    fluid.min((m.rbuf_bytes / m.mss_bytes - w).max(0.0))
}

/// The goodput in bytes/s; infinite without loss (then only capacity and the receive
/// buffer limit the path).
pub fn reno_rate(m: &RenoPath) -> f64 {
    let p = m.packet_loss.clamp(0.0, 1.0);
    if p <= 0.0 || m.rtt_s <= 0.0 {
        return f64::INFINITY;
    }
    if p >= 1.0 {
        return 0.0;
    }
    let (e, g) = m.cycle_inputs(p);
    let w = cycle_window(e, g);
    let p_r = m.retransmission_loss.clamp(0.0, p);
    let lost_per_episode = p / e + p * w;
    let q = 1.0 - (1.0 - p_r).powf(lost_per_episode);
    let cycle_packets = (w / 2.0 - g) * (0.75 * w + g / 2.0);
    let cycle_time = (w / 2.0 - g) * m.rtt_s;
    // After a timeout: slow start to W/4, then congestion avoidance from W/4 to W/2.
    let restart_packets = 3.0 * w * w / 32.0;
    let restart_time = (w / 4.0 + (w / 4.0).max(1.0).log2()) * m.rtt_s;
    let packets = cycle_packets + q * (sent_while_waiting(w, m, p_r) + restart_packets);
    let time = cycle_time + q * (m.rto_s * backoff(p_r) + restart_time);
    m.mss_bytes * packets / time
}

/// Packets a sender that starts in slow start sends beyond the steady rate before its
/// congestion-avoidance cycles settle: the start-up the steady-state rate leaves out,
/// which matters in runs of a few hundred round trips.
///
/// Slow start doubles the window each round trip from `initial_window` until the first
/// loss episode, after 1/e packets on average, and goes on doubling for the round trip
/// the loss takes to be detected; the window is then halved, from several times the
/// steady cycle's window, and each following cycle (from a to b, one packet more per
/// round trip, ending at the first loss after 1/e + b packets: b = 1 + √(1 + a² + 2/e))
/// starts from half the last one's end, until the cycles reach the steady one. Windows
/// are capped at `max_window` packets: what a round trip can deliver (the receive buffer,
/// the capacity times the base RTT). Timeouts during start-up are left out, which can
/// only add packets: the result stays an upper bound.
pub fn startup_excess(m: &RenoPath, max_window: f64) -> f64 {
    let p = m.packet_loss.clamp(0.0, 1.0);
    if p <= 0.0 || p >= 1.0 || m.rtt_s <= 0.0 {
        return 0.0;
    }
    let (e, g) = m.cycle_inputs(p);
    let steady = reno_rate(m) / m.mss_bytes * m.rtt_s;
    let w0 = m.initial_window.max(1.0);
    let cap = max_window.max(w0);
    // Slow start to the first loss, then one more (doubling) round trip to detect it.
    let before = 1.0 / e;
    let rounds = (1.0 + before / w0).log2();
    let detected = (2.0 * (before + w0)).min(cap);
    let mut excess = before + detected - steady * (rounds + 1.0);
    let settled = cycle_window(e, g) / 2.0 + g;
    let mut a = detected / 2.0 + g;
    for _ in 0..64 {
        if a <= settled + 0.5 {
            break;
        }
        let b = (1.0 + (1.0 + a * a + 2.0 / e).sqrt()).min(cap.max(a));
        let cycle_rounds = (b - a).max(1.0);
        excess += cycle_rounds * (a + b) / 2.0 - steady * cycle_rounds;
        a = b / 2.0 + g;
    }
    excess.max(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: f64, rtt: f64) -> RenoPath {
        RenoPath {
            rtt_s: rtt,
            rto_s: 1.0,
            mss_bytes: 1452.0,
            packet_loss: p,
            episode_rate: p,
            retransmission_loss: p,
            rbuf_bytes: 64e6,
            grows_in_recovery: false,
            initial_window: 3.0,
        }
    }

    #[test]
    fn small_loss_approaches_the_square_root_law() {
        // Timeouts vanish as p → 0 and the cycle window dominates: Mathis et al.'s
        // sqrt(3/2)·MSS/(RTT·sqrt(p)), which the cycle reproduces up to the W term.
        let p: f64 = 1e-5;
        let mathis = 1452.0 / 0.1 * (1.5 / p).sqrt();
        let r = reno_rate(&path(p, 0.1)) / mathis;
        assert!((0.99..1.01).contains(&r), "{r}");
    }

    #[test]
    fn the_rate_falls_with_loss_and_round_trip_time() {
        let mut last = f64::INFINITY;
        for p in [0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2] {
            let r = reno_rate(&path(p, 0.1));
            assert!(r < last, "p = {p}");
            last = r;
        }
        assert!(reno_rate(&path(0.01, 0.4)) < reno_rate(&path(0.01, 0.1)));
        assert_eq!(reno_rate(&path(0.0, 0.1)), f64::INFINITY);
        assert_eq!(reno_rate(&path(1.0, 0.1)), 0.0);
    }

    #[test]
    fn a_small_receive_buffer_turns_the_timeout_wait_into_dead_time() {
        // 10 % loss, 20 ms: most of the rate at a large buffer comes from sending on
        // during the RTO wait; with a buffer of 16 packets nothing can.
        let big = reno_rate(&path(0.1, 0.02));
        let small = reno_rate(&RenoPath {
            rbuf_bytes: 16.0 * 1452.0,
            ..path(0.1, 0.02)
        });
        assert!(small < 0.8 * big, "{small} vs {big}");
    }

    #[test]
    fn retransmissions_on_a_cleaner_path_avoid_most_timeouts() {
        let alone = reno_rate(&path(0.1, 0.1));
        let helped = reno_rate(&RenoPath {
            retransmission_loss: 0.01,
            ..path(0.1, 0.1)
        });
        // Without timeouts the cycle alone sets the rate: MSS·3W²/8 per W/2 round trips.
        let w = cycle_window(0.1, 0.0);
        let cycles_only = 1452.0 * (3.0 * w * w / 8.0) / (w / 2.0 * 0.1);
        assert!(
            helped > 1.2 * alone && helped < cycles_only,
            "{alone} {helped} {cycles_only}"
        );
    }

    #[test]
    fn growth_during_recovery_shortens_the_cycle_by_a_round_trip() {
        // At 1 % loss the cycle window is ≈ 17.7 packets; starting one packet higher and
        // growing through recovery gives ≈ 8 % more (a cycle of the same packets in one
        // round trip less), and the quadratic still solves packets = 1/e + W.
        let frozen = reno_rate(&path(0.01, 0.1));
        let grows = reno_rate(&RenoPath {
            grows_in_recovery: true,
            ..path(0.01, 0.1)
        });
        assert!(
            (1.05..1.11).contains(&(grows / frozen)),
            "{}",
            grows / frozen
        );
        let w = cycle_window(0.01, 1.0);
        let packets = (w / 2.0 - 1.0) * (0.75 * w + 0.5);
        assert!(
            (packets - (100.0 + w)).abs() < 1e-9,
            "{packets} vs {}",
            100.0 + w
        );
    }

    #[test]
    fn the_start_up_adds_a_few_cycles_of_packets_and_less_with_a_small_buffer() {
        // 1 % loss, 100 ms: slow start reaches ≈ 200 packets before the loss is seen;
        // the cycles after it start at ≈ 100, 50, 25 packets against a steady ≈ 13 per
        // round trip: ≈ 650 packets, five seconds of the steady rate. Capped at 95
        // packets a round trip (10 Mbit/s over 110 ms), half of that.
        let m = path(0.01, 0.1);
        let excess = startup_excess(&m, 1e6);
        let per_s = reno_rate(&m) / 1452.0;
        assert!((600.0..700.0).contains(&excess), "{excess}");
        assert!(
            (4.0..6.0).contains(&(excess / per_s)),
            "{} s",
            excess / per_s
        );
        let capped = startup_excess(&m, 95.0);
        assert!((250.0..400.0).contains(&capped), "{capped}");
        // A buffer of 20 packets keeps the overshoot small; no loss, no start-up term.
        assert!(startup_excess(&m, 20.0) < 0.3 * excess);
        assert_eq!(startup_excess(&path(0.0, 0.1), 1e6), 0.0);
    }

    #[test]
    fn bursty_loss_with_fewer_episodes_sustains_more() {
        let bernoulli = reno_rate(&path(0.03, 0.1));
        let bursts_of_three = reno_rate(&RenoPath {
            episode_rate: 0.01,
            ..path(0.03, 0.1)
        });
        assert!(bursts_of_three > 1.3 * bernoulli);
    }
}
