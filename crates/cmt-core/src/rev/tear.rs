//! The receiver's per-path congestion state machine, "inherited from TEAR" (Cao et al. 2015, CMT-Rev
//! §3.1 and MPTCP-rec 2016 §4.1; docs/algorithms.md §2.2). **A reconstruction** (decision D6): the papers only name the states
//! and say the transitions are TEAR's, whose table is in no available source. The
//! receiver emulates a TCP sender's window `W` (packets) from the per-path sequence
//! numbers it sees:
//!
//! | state | in-order packet | gap | round boundary | receiver timeout |
//! |---|---|---|---|---|
//! | SS | `W += 1`; `W ≥ ssthresh` → CR | → GAP | — | → TO |
//! | CA | `W += 1/W` | → GAP | — | → TO |
//! | GAP | `k += 1` per packet after the hole; hole filled → back, no cut; `k ≥ dupthresh` → FR | folded in | — | → TO |
//! | FR | entry: `ssthresh = max(W/2, 2)`, `W = ssthresh` (once per round), → CR | — | — | → TO |
//! | TO | entry: `ssthresh = max(W/2, 2)`, `W = 1`, → SR | — | — | stay |
//! | SR | count, no growth | → GAP | → SS | → TO |
//! | CR | `W += 1/W` | → GAP | → CA | → TO |
//!
//! The "Ready" states defer a regime change decided inside a round to the next round
//! boundary, because the rate is only recomputed per round.
//!
//! Window validation (a reconstruction, in the spirit of RFC 7661) applies only to
//! rounds in which the receiver's own buffer was the limit: then `W` is capped at the
//! round boundary at twice the packets the round carried (at least the initial window),
//! because a sender held back by the buffer, not by the path, would otherwise see its
//! emulated window — and so its advertised rate — grow without bound while nothing on
//! the path pushes back. In every other round the window stands: rounds end at every
//! advert on every path, so they are often shorter than an RTT and carry a few packets,
//! and a cap there removed far more window than all loss reactions together (the
//! advertised rates of two clean 10 Mbit/s paths sat at 0.3–0.4 Mbit/s). In slow start
//! the receiver also holds `W` to twice what the path delivered over the last RTT'
//! ([`Tear::limit`], called from the receiver), the clock a TCP sender's acks give it.

/// States (the MPTCP-rec paper's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TearState {
    /// Slow start.
    SlowStart,
    /// Congestion avoidance.
    CongestionAvoidance,
    /// A hole in the sequence, not yet a loss.
    Gap,
    /// Fast recovery (transient: the cut happens on entry).
    FastRecovery,
    /// Timeout (transient: the cut happens on entry).
    Timeout,
    /// Slow start from the next round on.
    SlowStartReady,
    /// Congestion avoidance from the next round on.
    CongestionAvoidanceReady,
}

/// One path's emulated sender window.
#[derive(Clone, Debug)]
pub struct Tear {
    /// Current state (never the transient FR/TO after a call returns).
    pub state: TearState,
    /// Emulated window, packets.
    pub w: f64,
    /// Emulated ssthresh, packets.
    pub ssthresh: f64,
    /// Next expected per-path sequence number.
    expected: Option<u64>,
    /// First missing sequence number while in GAP.
    hole: u64,
    /// Packets seen after the hole.
    k: u32,
    /// State to return to when a hole is filled.
    prev: TearState,
    /// A cut already happened in this round.
    cut_this_round: bool,
    dupthresh: u32,
    /// Packets received in the current round.
    pub received: u64,
    initial_w: f64,
    /// Holes opened in the current round.
    pub holes: u64,
}

impl Tear {
    /// Starts in slow start with `initial_w` packets.
    pub fn new(initial_w: f64, dupthresh: u32) -> Self {
        Tear {
            state: TearState::SlowStart,
            w: initial_w.max(1.0),
            ssthresh: f64::INFINITY,
            expected: None,
            hole: 0,
            k: 0,
            prev: TearState::SlowStart,
            cut_this_round: false,
            dupthresh: dupthresh.max(1),
            received: 0,
            holes: 0,
            initial_w: initial_w.max(1.0),
        }
    }

    fn grow(&mut self) {
        match self.state {
            TearState::SlowStart => {
                self.w += 1.0;
                if self.w >= self.ssthresh {
                    self.state = TearState::CongestionAvoidanceReady;
                }
            }
            TearState::CongestionAvoidance | TearState::CongestionAvoidanceReady => {
                self.w += 1.0 / self.w
            }
            _ => {}
        }
    }

    fn cut(&mut self, timeout: bool) {
        self.ssthresh = (self.w / 2.0).max(2.0);
        self.w = if timeout { 1.0 } else { self.ssthresh };
        self.cut_this_round = true;
    }

    /// A packet with per-path sequence number `seq` arrived.
    pub fn on_packet(&mut self, seq: u64) {
        self.received += 1;
        let expected = *self.expected.get_or_insert(seq);
        if self.state == TearState::Gap {
            if seq == self.hole {
                // Reordering, not loss: back without a cut.
                self.state = self.prev;
                if seq >= expected {
                    self.expected = Some(seq + 1);
                }
                return;
            }
            if seq > self.hole {
                self.k += 1;
            }
            self.expected = Some(expected.max(seq + 1));
            if self.k >= self.dupthresh {
                if self.cut_this_round {
                    self.state = TearState::CongestionAvoidanceReady;
                } else {
                    self.state = TearState::FastRecovery;
                    self.cut(false);
                    self.state = TearState::CongestionAvoidanceReady;
                }
            }
            return;
        }
        if seq < expected {
            return; // late or duplicate: nothing to learn
        }
        if seq > expected {
            self.prev = self.state;
            self.holes += 1;
            self.state = TearState::Gap;
            self.hole = expected;
            self.k = 1;
            self.expected = Some(seq + 1);
            return;
        }
        self.expected = Some(seq + 1);
        self.grow();
    }

    /// The sender started a new round (a new round id was seen on this path);
    /// `buffer_limited`: the receiver's buffer held the sender back during the round;
    /// `may_cut`: a loss in the new round may cut the window again (the caller allows
    /// one cut per RTT, since rounds can be shorter than that).
    pub fn on_round(&mut self, buffer_limited: bool, may_cut: bool) {
        if buffer_limited {
            let cap = (2 * self.received) as f64;
            self.w = self.w.min(cap.max(self.initial_w));
        }
        self.state = match self.state {
            TearState::SlowStartReady => TearState::SlowStart,
            TearState::CongestionAvoidanceReady => TearState::CongestionAvoidance,
            s => s,
        };
        if may_cut {
            self.cut_this_round = false;
        }
        self.received = 0;
        self.holes = 0;
    }

    /// Lowers the window to `max_w` packets (never below the initial window).
    pub fn limit(&mut self, max_w: f64) {
        self.w = self.w.min(max_w.max(self.initial_w));
    }

    /// Whether the window grows by slow start (counting a hole opened in slow start).
    pub fn in_slow_start(&self) -> bool {
        let state = if self.state == TearState::Gap {
            self.prev
        } else {
            self.state
        };
        matches!(state, TearState::SlowStart | TearState::SlowStartReady)
    }

    /// No packet arrived on the path for a receiver RTO.
    pub fn on_timeout(&mut self) {
        if self.state != TearState::SlowStartReady || !self.cut_this_round {
            self.state = TearState::Timeout;
            self.cut(true);
        }
        self.state = TearState::SlowStartReady;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use TearState::*;

    fn fed(seqs: &[u64]) -> Tear {
        let mut t = Tear::new(2.0, 3);
        for &s in seqs {
            t.on_packet(s);
        }
        t
    }

    #[test]
    fn transition_table() {
        // (packets, then state and W)
        let cases: Vec<(Vec<u64>, TearState, f64)> = vec![
            // SS: +1 per in-order packet.
            (vec![0, 1, 2], SlowStart, 5.0),
            // A hole: GAP, W held.
            (vec![0, 1, 3], Gap, 4.0),
            // The hole filled (reordering): back to SS, no cut, no growth for it.
            (vec![0, 1, 3, 2], SlowStart, 4.0),
            // Three packets after the hole: FR cut to max(W/2, 2), then CR.
            (vec![0, 1, 3, 4, 5], CongestionAvoidanceReady, 2.0),
            // In CR growth is CA's: W += 1/W.
            (vec![0, 1, 3, 4, 5, 6], CongestionAvoidanceReady, 2.5),
        ];
        for (i, (seqs, state, w)) in cases.iter().enumerate() {
            let t = fed(seqs);
            assert_eq!(t.state, *state, "case {i}");
            assert!((t.w - w).abs() < 1e-9, "case {i}: W {}", t.w);
        }
    }

    #[test]
    fn ready_states_switch_at_the_round_boundary_and_one_cut_per_round() {
        let mut t = fed(&[0, 1, 3, 4, 5]);
        assert_eq!(t.state, CongestionAvoidanceReady);
        // A second loss in the same round: no second cut.
        for s in [7, 8, 9, 10] {
            t.on_packet(s);
        }
        assert!((t.w - (2.0 + 1.0 / 2.0)).abs() < 0.3, "W {}", t.w);
        t.on_round(false, true);
        assert_eq!(t.state, CongestionAvoidance);
        // SS reaching ssthresh goes to CR, then CA at the boundary.
        let mut s = Tear::new(1.0, 3);
        s.ssthresh = 3.0;
        s.on_packet(0);
        s.on_packet(1);
        assert_eq!(s.state, CongestionAvoidanceReady);
        s.on_round(false, true);
        assert_eq!(s.state, CongestionAvoidance);
    }

    #[test]
    fn timeout_restarts_from_one_packet_in_slow_start_ready() {
        let mut t = fed(&[0, 1, 2, 3, 4, 5]); // W = 8
        t.on_timeout();
        assert_eq!((t.state, t.w, t.ssthresh), (SlowStartReady, 1.0, 4.0));
        t.on_packet(6);
        assert_eq!(t.w, 1.0, "no growth in SR");
        t.on_round(false, true);
        assert_eq!(t.state, SlowStart);
        t.on_packet(7);
        assert_eq!(t.w, 2.0);
    }

    #[test]
    fn a_buffer_limited_round_caps_the_window_at_twice_what_it_carried() {
        let mut t = fed(&(0..20).collect::<Vec<_>>()); // W = 22 after 20 packets
        t.on_round(true, true);
        assert_eq!(t.w, 22.0, "20 packets: cap 40");
        t.on_packet(20);
        t.on_packet(21); // W = 24, only 2 packets this round
        t.on_round(true, true);
        assert_eq!(t.w, 4.0);
        t.on_round(true, true); // an empty round: never below the initial window
        assert_eq!(t.w, 2.0);
    }

    #[test]
    fn short_rounds_do_not_shrink_the_window_when_the_buffer_is_not_the_limit() {
        // Adverts end rounds on every path, often after one or two packets: the window
        // only follows the packets and losses, never the round length.
        let mut t = fed(&(0..20).collect::<Vec<_>>()); // W = 22
        for s in 20..40 {
            t.on_packet(s); // one packet per round
            t.on_round(false, true);
        }
        assert_eq!(t.w, 42.0);
        t.on_round(false, true); // an empty round changes nothing either
        assert_eq!(t.w, 42.0);
    }
}
