//! CUBIC (RFC 9438, Xu, Ha, Rhee, Goel, Eggert 2023), per path and uncoupled: the
//! congestion controller Linux runs by default, and with it what upstream Linux MPTCP
//! runs on every subflow (it has no coupled controller). docs/algorithms.md §10.1.
//!
//! In congestion avoidance the window follows `W_cubic(t) = C·(t − K)³ + W_max` (in
//! segments, t in seconds since the epoch began), growing towards `W_cubic(t + RTT)` by
//! `(target − cwnd)/cwnd` per acknowledged segment, the target held within
//! `[cwnd, 1.5·cwnd]`; below the Reno-friendly estimate `W_est` (AIMD with
//! `α = 3(1 − β)/(1 + β)`) the window is `W_est`. A loss sets `W_max` (less with fast
//! convergence), `ssthresh = β·cwnd`, and ends the epoch. C = 0.4, β = 0.7. Slow start
//! is the core's (RFC 9260 §7.2.1, as [`Reno`]).
//!
//! `flavour = "linux"` (decision D36) follows Linux's `tcp_cubic.c` where it departs
//! from the RFC: the target is taken one *minimum* RTT ahead (`delay_min`), the
//! Reno-friendly `α` never switches to 1, a timeout forgets `W_max` (`bictcp_reset`),
//! and with no `W_max` (no loss yet) the window grows at least 5 % per round trip.
//! `hystart = true` ends slow start as Linux does by default, with [`HyStart`]
//! (decision D56); `linux-cubic` has it on.

use super::hystart::HyStart;
use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal, Reno};
use crate::params::{ParamError, Params};
use crate::time::{Duration, Time};
use crate::view::PathId;

/// RFC 9438's C, segments per second³.
const C: f64 = 0.4;
/// RFC 9438's multiplicative decrease factor.
const BETA: f64 = 0.7;

/// Where the Linux implementation departs from RFC 9438.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CubicFlavour {
    /// RFC 9438 as written.
    Rfc9438,
    /// Linux `tcp_cubic.c` (decision D36).
    Linux,
}

/// Factory for [`Cubic`]; parameters `flavour` (`"rfc9438"`, default, or `"linux"`),
/// `fast_convergence` (default true) and `hystart` (default false).
#[derive(Clone, Debug)]
pub struct CubicFactory {
    flavour: CubicFlavour,
    fast_convergence: bool,
    hystart: bool,
}

impl CubicFactory {
    /// Reads and validates parameters.
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("cubic", &["flavour", "fast_convergence", "hystart"])?;
        let flavour = match params.text("flavour", "rfc9438")? {
            "rfc9438" => CubicFlavour::Rfc9438,
            "linux" => CubicFlavour::Linux,
            o => {
                return Err(ParamError(format!(
                    "parameter `flavour`: `{o}` (rfc9438 or linux)"
                )))
            }
        };
        let fast_convergence = params.flag("fast_convergence", true)?;
        Ok(CubicFactory {
            flavour,
            fast_convergence,
            hystart: params.flag("hystart", false)?,
        })
    }

    /// Linux's CUBIC, as upstream MPTCP runs it on each subflow (`linux-cubic`), HyStart
    /// included; parameters `fast_convergence` and `hystart` (both default true).
    pub fn linux_from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("linux-cubic", &["fast_convergence", "hystart"])?;
        Ok(CubicFactory {
            flavour: CubicFlavour::Linux,
            fast_convergence: params.flag("fast_convergence", true)?,
            hystart: params.flag("hystart", true)?,
        })
    }
}

impl CcFactory for CubicFactory {
    fn name(&self) -> &'static str {
        match self.flavour {
            CubicFlavour::Rfc9438 => "cubic",
            CubicFlavour::Linux => "linux-cubic",
        }
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        let mut c = Cubic::new(init, self.flavour, self.fast_convergence);
        if self.hystart {
            c.hystart = Some(HyStart::default());
        }
        Box::new(c)
    }
}

/// The current congestion-avoidance epoch (RFC 9438 §4.2).
#[derive(Clone, Copy, Debug)]
struct Epoch {
    start: Time,
    /// K, seconds: when `W_cubic` reaches `W_max` again.
    k: f64,
    /// `W_max` this epoch aims at, segments.
    w_max: f64,
}

/// CUBIC for one path.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// Window, slow start, idle decay and the window-full rule.
    reno: Reno,
    flavour: CubicFlavour,
    fast_convergence: bool,
    /// The window in bytes with its fraction (the increase per ack is fractional).
    cwnd: f64,
    /// Window before the last reduction, segments (0 before any).
    w_max: f64,
    /// cwnd before the last reduction, segments (`cwnd_prior`).
    prior: f64,
    /// Reno-friendly estimate, segments.
    w_est: f64,
    epoch: Option<Epoch>,
    /// Linux's slow-start exit, when on.
    hystart: Option<HyStart>,
}

impl Cubic {
    /// Starts in slow start at the initial window.
    pub fn new(init: &CcInit, flavour: CubicFlavour, fast_convergence: bool) -> Self {
        Cubic {
            reno: Reno::new(init),
            flavour,
            fast_convergence,
            cwnd: init.initial_cwnd as f64,
            w_max: 0.0,
            prior: 0.0,
            w_est: 0.0,
            epoch: None,
            hystart: None,
        }
    }

    /// `W_cubic(t)`, segments.
    fn w_cubic(e: &Epoch, t: f64) -> f64 {
        C * (t - e.k).powi(3) + e.w_max
    }

    /// Begins an epoch at the first congestion-avoidance ack after a reduction
    /// (RFC 9438 §4.2 and §4.3).
    fn begin_epoch(&mut self, now: Time, seg: f64) -> Epoch {
        let cwnd = self.cwnd / seg;
        let (k, w_max) = if self.w_max > cwnd {
            (((self.w_max - cwnd) / C).cbrt(), self.w_max)
        } else {
            (0.0, cwnd)
        };
        self.w_est = cwnd;
        let e = Epoch {
            start: now,
            k,
            w_max,
        };
        self.epoch = Some(e);
        e
    }

    /// Congestion avoidance for one SACK acknowledging `ack.bytes_acked`.
    fn avoid_congestion(&mut self, ack: &AckSignal) {
        let seg = ack.mtu as f64;
        let e = match self.epoch {
            Some(e) => e,
            None => self.begin_epoch(ack.now, seg),
        };
        let rtt = match self.flavour {
            CubicFlavour::Rfc9438 => ack.srtt.or(ack.min_rtt),
            CubicFlavour::Linux => ack.min_rtt.or(ack.srtt),
        }
        .unwrap_or(Duration::ZERO)
        .as_secs_f64();
        let t = ack.now.saturating_since(e.start).as_secs_f64();
        let cwnd = self.cwnd / seg;
        let acked = ack.bytes_acked as f64 / seg;
        // Reno-friendly estimate (§4.3): α until W_est reaches cwnd_prior, then 1
        // (Linux keeps α).
        let alpha = if self.flavour == CubicFlavour::Rfc9438 && self.w_est >= self.prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * acked / cwnd;
        let mut next = if Self::w_cubic(&e, t) < self.w_est {
            self.w_est
        } else {
            // Concave and convex regions (§4.4, §4.5).
            let target = Self::w_cubic(&e, t + rtt).clamp(cwnd, 1.5 * cwnd);
            cwnd + (target - cwnd) / cwnd * acked
        };
        if self.flavour == CubicFlavour::Linux && self.w_max == 0.0 {
            // No loss yet (or none since a timeout): Linux grows at least 5 % per round
            // trip while the path's capacity is unknown (`ca->cnt` ≤ 20).
            next = next.max(cwnd + 0.05 * acked);
        }
        // At most one segment more per SACK, as every window here grows (RFC 4960 byte
        // counting).
        let cap = (self.reno.cwnd() + ack.mtu) as f64;
        self.cwnd = (next * seg).min(self.cwnd + seg).min(cap).max(self.cwnd);
        self.reno.set_cwnd_keep_pba(self.cwnd as u64);
    }

    /// HyStart's part of an ack (`cubictcp_acked`): the round trip of the newest chunk
    /// acknowledged lowers the minimum (not in the first second of an epoch, as Linux
    /// discards samples right after a recovery), and in slow start may end it: ssthresh
    /// becomes the window. True when it ended slow start with this ack.
    fn hystart_ends_slow_start(&mut self, ack: &AckSignal) -> bool {
        let (Some(h), Some(sent)) = (&mut self.hystart, ack.newest_sent) else {
            return false;
        };
        let fresh_epoch = self
            .epoch
            .is_some_and(|e| ack.now.saturating_since(e.start) < Duration::from_secs(1));
        if fresh_epoch {
            return false;
        }
        h.note_delay(ack.now.saturating_since(sent));
        let (cwnd, ssthresh) = (self.reno.cwnd(), self.reno.ssthresh());
        if cwnd >= ssthresh || ack.bytes_acked == 0 {
            return false;
        }
        // Linux's `sk_pacing_rate`: 200 % of cwnd per SRTT below half of ssthresh.
        let ratio = if cwnd < ssthresh / 2 { 2.0 } else { 1.2 };
        let pacing = ack
            .srtt
            .filter(|s| *s > Duration::ZERO)
            .map(|s| ratio * cwnd.max(ack.flight_before) as f64 / s.as_secs_f64());
        if h.on_ack(ack.now, sent, cwnd / ack.mtu.max(1), pacing)
            .is_none()
        {
            return false;
        }
        self.reno.set_state(cwnd, cwnd);
        true
    }

    /// A congestion event (§4.6, §4.7): the new `W_max`, `cwnd_prior` and ssthresh.
    fn reduce(&mut self, loss: &LossSignal) -> u64 {
        let seg = loss.mtu as f64;
        let cwnd = self.cwnd / seg;
        self.w_max = if self.fast_convergence && cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        self.prior = cwnd;
        self.epoch = None;
        ((self.cwnd * BETA) as u64).max(loss.min_ssthresh)
    }
}

impl CongestionControl for Cubic {
    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }

    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]) {
        if self.hystart_ends_slow_start(ack) {
            return;
        }
        let (cwnd, ssthresh) = (self.reno.cwnd(), self.reno.ssthresh());
        let exited = self.hystart.as_ref().is_some_and(|h| h.found().is_some());
        // Linux's slow start is `cwnd < ssthresh`; RFC 9260's `cwnd <= ssthresh` would
        // grow once more past HyStart's exit at ssthresh = cwnd.
        if cwnd < ssthresh || (cwnd == ssthresh && !exited) {
            self.reno.on_ack(ack, all);
            self.cwnd = self.reno.cwnd() as f64;
        } else if ack.bytes_acked > 0 && ack.flight_before >= self.reno.cwnd() {
            self.avoid_congestion(ack);
        }
    }

    fn on_fast_retransmit(&mut self, loss: &LossSignal) {
        let ssthresh = self.reduce(loss);
        self.reno.set_state(ssthresh, ssthresh);
        self.cwnd = ssthresh as f64;
    }

    fn on_timeout(&mut self, loss: &LossSignal) {
        let ssthresh = self.reduce(loss);
        if let Some(h) = &mut self.hystart {
            h.on_timeout();
        }
        if self.flavour == CubicFlavour::Linux {
            // bictcp_reset: the next epoch starts from the window it finds.
            self.w_max = 0.0;
            self.prior = 0.0;
        }
        self.reno.set_state(loss.mtu, ssthresh);
        self.cwnd = loss.mtu as f64;
    }

    fn on_idle(&mut self, mtu: u64, initial_cwnd: u64) {
        self.reno.on_idle(mtu, initial_cwnd);
        self.cwnd = self.reno.cwnd() as f64;
        self.epoch = None;
    }

    fn set_cwnd(&mut self, cwnd: u64) {
        self.reno.set_cwnd(cwnd);
        self.cwnd = cwnd as f64;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1500;

    fn cubic(flavour: CubicFlavour, cwnd_seg: u64) -> Cubic {
        Cubic::new(
            &CcInit {
                mtu: MTU,
                initial_cwnd: cwnd_seg * MTU,
                initial_ssthresh: MTU,
            },
            flavour,
            true,
        )
    }
    fn ack(at_s: f64, bytes: u64, flight: u64) -> AckSignal {
        AckSignal {
            now: Time::ZERO + Duration::from_secs_f64(at_s),
            bytes_acked: bytes,
            pba_bytes: bytes,
            flight_before: flight,
            mtu: MTU,
            srtt: Some(Duration::from_millis(100)),
            min_rtt: Some(Duration::from_millis(100)),
            newest_sent: None,
        }
    }
    fn loss() -> LossSignal {
        crate::cc::tests::loss_of(MTU)
    }
    /// Acks a full window every 100 ms from `from` s to `to` s; the window in segments
    /// at each round's end.
    fn rounds(c: &mut Cubic, from: f64, to: f64) -> Vec<f64> {
        let mut out = Vec::new();
        let mut t = from;
        while t < to - 1e-9 {
            let w = c.cwnd();
            let n = w / MTU;
            for i in 0..n {
                let at = t + 0.1 * (i + 1) as f64 / n as f64;
                c.on_ack(&ack(at, MTU, c.cwnd()), &[]);
            }
            t += 0.1;
            out.push(c.cwnd() as f64 / MTU as f64);
        }
        out
    }

    #[test]
    fn after_a_loss_the_window_follows_the_cubic_curve_through_w_max() {
        let mut c = cubic(CubicFlavour::Rfc9438, 100);
        c.on_fast_retransmit(&loss());
        assert_eq!(c.cwnd(), 70 * MTU, "β = 0.7");
        assert_eq!(c.ssthresh(), 70 * MTU);
        // W_cubic(t) = 0.4·(t − K)³ + 100 with K = ∛(100·0.3/0.4) = 4.217 s: concave up
        // to W_max, a plateau around K, convex beyond. Each round trip the window moves
        // to the target W_cubic(t + RTT) set at the round's start, so at a round's end
        // it is W_cubic(t) within the per-ack steps' shortfall.
        let k = (100.0f64 * 0.3 / 0.4).cbrt();
        let w = rounds(&mut c, 0.0, 5.5);
        for (i, &got) in w.iter().enumerate().skip(1) {
            let t = 0.1 * (i + 1) as f64;
            let want = 0.4 * (t - k).powi(3) + 100.0;
            assert!(
                (got - want).abs() < 1.0,
                "t = {t:.1} s: window {got:.2} segments, W_cubic {want:.2}"
            );
        }
    }

    #[test]
    fn fast_convergence_lowers_w_max_when_a_loss_comes_below_the_previous_one() {
        let mut c = cubic(CubicFlavour::Rfc9438, 100);
        c.on_fast_retransmit(&loss()); // W_max 100, cwnd 70
        c.on_fast_retransmit(&loss()); // cwnd 70 < W_max: W_max = 70·1.7/2 = 59.5
        assert!((c.w_max - 59.5).abs() < 1e-9, "{}", c.w_max);
        assert_eq!(c.cwnd(), 49 * MTU);
    }

    #[test]
    fn a_small_window_grows_as_the_reno_friendly_estimate_whose_alpha_reaches_one() {
        // At 10 segments and 100 ms the cubic curve regains W_max = 10 only after
        // K = ∛(10·0.3/0.4) = 1.96 s; AIMD at α = 3·0.3/1.7 = 0.53 segments per round trip
        // is faster and rules. Once it passes the window before the loss (10), RFC 9438
        // takes α = 1, Reno's rate; Linux keeps 0.53.
        for (flavour, per_round) in [(CubicFlavour::Rfc9438, 1.0), (CubicFlavour::Linux, 0.529)] {
            let mut c = cubic(flavour, 10);
            c.on_fast_retransmit(&loss()); // 7 segments
            let w = rounds(&mut c, 0.0, 3.0);
            assert!(w[3] < 10.0, "{flavour:?}: α < 1 below cwnd_prior: {w:?}");
            let rate = (w[29] - w[19]) / 10.0;
            assert!(
                (rate - per_round).abs() < 0.05,
                "{flavour:?}: {rate:.3} segments per round trip, want {per_round}"
            );
        }
    }

    #[test]
    fn the_window_grows_only_while_it_is_used() {
        let mut c = cubic(CubicFlavour::Rfc9438, 20);
        c.on_fast_retransmit(&loss());
        let before = c.cwnd();
        for i in 0..200 {
            c.on_ack(&ack(i as f64 * 0.05, MTU, before / 2), &[]);
        }
        assert_eq!(c.cwnd(), before);
    }

    #[test]
    fn linux_forgets_w_max_on_a_timeout_and_the_rfc_keeps_it() {
        for (flavour, w_max) in [(CubicFlavour::Rfc9438, 100.0), (CubicFlavour::Linux, 0.0)] {
            let mut c = cubic(flavour, 100);
            c.on_timeout(&loss());
            assert_eq!(c.cwnd(), MTU);
            assert_eq!(c.ssthresh(), 70 * MTU);
            assert_eq!(c.w_max, w_max, "{flavour:?}");
        }
    }

    #[test]
    fn before_any_loss_linux_grows_at_least_five_percent_per_round_trip() {
        // Congestion avoidance with no W_max (the test's ssthresh is one MTU): the curve
        // from K = 0 adds 0.4·t³ segments, far less than Linux's floor of cwnd/20 per
        // round trip (`ca->cnt` ≤ 20). The RFC has no floor: W_est adds α = 1 per round.
        let mut linux = cubic(CubicFlavour::Linux, 100);
        let w = rounds(&mut linux, 0.0, 1.0);
        for pair in w.windows(2) {
            let g = pair[1] / pair[0];
            assert!(
                (1.049..1.056).contains(&g),
                "growth {g:.4} per round: {w:?}"
            );
        }
        let mut rfc = cubic(CubicFlavour::Rfc9438, 100);
        let w = rounds(&mut rfc, 0.0, 1.0);
        assert!(w[9] < 112.0, "RFC 9438: about one segment per round: {w:?}");
    }

    /// A path of 40 ms whose acks arrive 1 ms apart (a pipe of 40 packets, one ack
    /// each): slow start from 10 segments, acks of `MTU` each carrying the round trip of
    /// the chunk they acknowledge. Returns the window and ssthresh after `acks` acks.
    fn slow_start_on_a_pipe(c: &mut Cubic, acks: usize) -> (u64, u64) {
        let mut sent = std::collections::VecDeque::new();
        for k in 0..10 {
            sent.push_back(Time::ZERO + Duration::from_micros(k));
        }
        let mut now = Time::ZERO + Duration::from_millis(40);
        for _ in 0..acks {
            let sent_at = sent.pop_front().expect("a chunk in flight");
            let flight = (sent.len() as u64 + 1) * MTU;
            let mut a = ack(0.0, MTU, flight);
            a.now = now.max(sent_at + Duration::from_millis(40));
            a.newest_sent = Some(sent_at);
            a.srtt = Some(Duration::from_millis(40));
            a.min_rtt = Some(Duration::from_millis(40));
            now = a.now + Duration::from_millis(1);
            c.on_ack(&a, &[]);
            while (sent.len() as u64) * MTU < c.cwnd() {
                sent.push_back(a.now);
            }
        }
        (c.cwnd(), c.ssthresh())
    }

    #[test]
    fn hystart_ends_slow_start_when_the_acks_of_a_round_fill_half_the_round_trip() {
        let linux = |hystart: bool| {
            let mut c = cubic(CubicFlavour::Linux, 10);
            c.reno.set_state(10 * MTU, u64::MAX / 2);
            if hystart {
                c.hystart = Some(HyStart::default());
            }
            c
        };
        // Acks 1 ms apart, one per packet: slow start doubles the window each round
        // (10, 20, 40 …). A round's acks form one train (no gap over 2 ms) only once the
        // pipe is full, and the train passes 20 ms (half of 40) after 20 of them: the
        // round of 20 ends short, so it is the round that starts at 40, 20–40 acks in
        // (the round is found one ack late). The window then is 40 plus one per ack.
        let mut c = linux(true);
        let (cwnd, ssthresh) = slow_start_on_a_pipe(&mut c, 200);
        assert_eq!(
            c.hystart.as_ref().and_then(|h| h.found()),
            Some(super::super::hystart::Exit::AckTrain)
        );
        let exit = ssthresh / MTU;
        assert!((60..=80).contains(&exit), "exit at {exit} segments");
        // From there CUBIC, not slow start: at most 5 % and a bit per round trip.
        assert!(cwnd < ssthresh * 3 / 2, "{cwnd} after exit at {ssthresh}");
        // Without HyStart, slow start goes on: the window passes the pipe.
        let mut c = linux(false);
        let (cwnd, _) = slow_start_on_a_pipe(&mut c, 200);
        assert!(cwnd >= 100 * MTU, "{}", cwnd / MTU);
    }
}
