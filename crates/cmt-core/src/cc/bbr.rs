//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh and Jacobson, "BBR: Congestion-Based
//! Congestion Control", ACM Queue 2016; draft-cardwell-iccrg-bbr-congestion-control-00,
//! 2017; docs/algorithms.md §10.2): a model of the path — its bottleneck bandwidth, the
//! windowed maximum of delivery-rate samples over 10 round trips, and its round-trip
//! propagation time, the windowed minimum of RTT samples over 10 s — sets a pacing rate
//! (`pacing_gain · BtlBw`) and a window (`cwnd_gain · BtlBw · RTprop`).
//!
//! States: Startup doubles the rate each round (gains 2/ln 2) until the bandwidth has
//! not grown by 25 % for three rounds; Drain (pacing gain ln 2 / 2) empties the queue
//! Startup built, until in flight ≤ BDP; ProbeBW cycles the pacing gain through
//! 5/4, 3/4 and six times 1, one phase per RTprop, with `cwnd_gain` 2; ProbeRTT, when
//! RTprop has not been measured anew for 10 s, holds the window at 4 packets for
//! 200 ms and a round trip. Losses do not cut the model: a fast retransmit holds the
//! window to what is in flight for one round (packet conservation) and then restores
//! it; a timeout sets it to one packet, from which it grows back by what is acked.

use super::rate_sample::{RateSample, RateSampler};
use super::{AckSignal, CcFactory, CcInit, CcPathView, CongestionControl, LossSignal};
use crate::time::{Duration, Time};
use crate::view::PathId;

/// Startup's gains: the smallest that doubles the delivery rate each round.
const HIGH_GAIN: f64 = 2.885_390_081_777_927; // 2 / ln 2
/// ProbeBW's pacing gains, one phase each.
const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Rounds the bandwidth filter spans.
const BW_ROUNDS: u64 = 10;
/// How long an RTprop measurement stands.
const RTPROP_WINDOW: Duration = Duration::from_secs(10);
/// How long ProbeRTT holds the window down.
const PROBE_RTT_TIME: Duration = Duration::from_millis(200);
/// The smallest window, packets.
const MIN_PACKETS: u64 = 4;

/// BBR's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exponential search for the bandwidth.
    Startup,
    /// Empty the queue Startup built.
    Drain,
    /// Steady state: probe for more bandwidth, then drain what the probe queued.
    ProbeBw,
    /// Measure the propagation time with an almost empty pipe.
    ProbeRtt,
}

/// Factory for [`Bbr`].
#[derive(Clone, Debug, Default)]
pub struct BbrFactory;

impl CcFactory for BbrFactory {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn build(&self, _path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        Box::new(Bbr::new(init))
    }
}

/// The windowed maximum of the bandwidth samples over the last [`BW_ROUNDS`] rounds
/// (a monotone queue: each entry larger than every later one).
#[derive(Clone, Debug, Default)]
struct MaxFilter(Vec<(u64, f64)>);

impl MaxFilter {
    fn update(&mut self, round: u64, v: f64) {
        self.0.retain(|&(r, x)| x > v && r + BW_ROUNDS > round);
        self.0.push((round, v));
    }
    fn get(&self) -> f64 {
        self.0.first().map_or(0.0, |&(_, x)| x)
    }
}

/// BBR v1 on one path.
#[derive(Clone, Debug)]
pub struct Bbr {
    mtu: u64,
    initial_cwnd: u64,
    cwnd: u64,
    /// The window before ProbeRTT or a loss held it down.
    prior_cwnd: u64,
    mode: Mode,
    sampler: RateSampler,
    btl_bw: MaxFilter,
    rt_prop: Option<Duration>,
    rt_prop_stamp: Time,
    /// RTprop had not been measured anew for [`RTPROP_WINDOW`] when the latest sample
    /// came (judged before the sample replaced it): time for ProbeRTT.
    rt_prop_expired: bool,
    round: u64,
    next_round_delivered: u64,
    round_start: bool,
    filled_pipe: bool,
    full_bw: f64,
    full_bw_rounds: u32,
    pacing_gain: f64,
    cwnd_gain: f64,
    pacing_rate: f64,
    cycle_index: usize,
    cycle_stamp: Time,
    probe_rtt_done: Option<Time>,
    probe_rtt_round_done: bool,
    /// Packet conservation until this round after a fast retransmit.
    conserve_until: Option<u64>,
    in_flight: u64,
}

impl Bbr {
    /// A BBR controller in Startup.
    pub fn new(init: &CcInit) -> Self {
        Bbr {
            mtu: init.mtu,
            initial_cwnd: init.initial_cwnd,
            cwnd: init.initial_cwnd,
            prior_cwnd: init.initial_cwnd,
            mode: Mode::Startup,
            sampler: RateSampler::default(),
            btl_bw: MaxFilter::default(),
            rt_prop: None,
            rt_prop_stamp: Time::ZERO,
            rt_prop_expired: false,
            round: 0,
            next_round_delivered: 0,
            round_start: false,
            filled_pipe: false,
            full_bw: 0.0,
            full_bw_rounds: 0,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            // The draft's first rate, before any RTT sample: the initial window per ms.
            pacing_rate: HIGH_GAIN * init.initial_cwnd as f64 / 1e-3,
            cycle_index: 0,
            cycle_stamp: Time::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            conserve_until: None,
            in_flight: 0,
        }
    }

    /// The state it is in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The pacing gain in force.
    pub fn pacing_gain(&self) -> f64 {
        self.pacing_gain
    }

    /// The bottleneck bandwidth estimate, bytes/s.
    pub fn btl_bw(&self) -> f64 {
        self.btl_bw.get()
    }

    /// The estimated bandwidth-delay product times `gain`, bytes (the initial window
    /// before any estimate).
    fn bdp(&self, gain: f64) -> u64 {
        match self.rt_prop {
            Some(rt) if self.btl_bw() > 0.0 => {
                (gain * self.btl_bw() * rt.as_secs_f64()).ceil() as u64
            }
            _ => self.initial_cwnd,
        }
    }

    fn min_cwnd(&self) -> u64 {
        MIN_PACKETS * self.mtu
    }

    fn on_sample(&mut self, now: Time, s: Option<RateSample>) {
        self.round_start = false;
        let Some(s) = s else { return };
        if s.prior_delivered >= self.next_round_delivered {
            self.next_round_delivered = self.sampler.delivered;
            self.round += 1;
            self.round_start = true;
        }
        // Every sample enters the filter: the core does not tell application-limited
        // ones apart (decision D50), and a low one never lowers a windowed maximum.
        self.btl_bw.update(self.round, s.rate);
        self.rt_prop_expired = now > self.rt_prop_stamp + RTPROP_WINDOW;
        // Only a strictly lower sample renews the estimate (Linux's tcp_bbr.c; the
        // draft's `<=` would let a steady pipe's equal samples put ProbeRTT off for ever).
        if self.rt_prop.is_none_or(|r| s.rtt < r) || self.rt_prop_expired {
            self.rt_prop = Some(s.rtt);
            self.rt_prop_stamp = now;
        }
    }

    fn enter_probe_bw(&mut self, now: Time) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = 2.0;
        // A phase other than the draining one, spread between flows by how much each
        // had delivered (the draft draws it at random).
        let pick = (self.sampler.delivered / self.mtu.max(1)) % 7;
        self.cycle_index = if pick == 0 { 0 } else { pick as usize + 1 };
        self.pacing_gain = CYCLE[self.cycle_index];
        self.cycle_stamp = now;
    }

    fn advance_cycle(&mut self, now: Time, prior_in_flight: u64) {
        let full = self
            .rt_prop
            .is_some_and(|rt| now.saturating_since(self.cycle_stamp) > rt);
        let next = match self.pacing_gain {
            g if g > 1.0 => full && prior_in_flight >= self.bdp(g),
            g if g < 1.0 => full || prior_in_flight <= self.bdp(1.0),
            _ => full,
        };
        if next {
            self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
            self.pacing_gain = CYCLE[self.cycle_index];
            self.cycle_stamp = now;
        }
    }

    fn update_mode(&mut self, now: Time, prior_in_flight: u64) {
        if self.mode == Mode::ProbeBw {
            self.advance_cycle(now, prior_in_flight);
        }
        if !self.filled_pipe && self.round_start {
            if self.btl_bw() >= 1.25 * self.full_bw {
                self.full_bw = self.btl_bw();
                self.full_bw_rounds = 0;
            } else {
                self.full_bw_rounds += 1;
                self.filled_pipe = self.full_bw_rounds >= 3;
            }
        }
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && self.in_flight <= self.bdp(1.0) {
            self.enter_probe_bw(now);
        }
        self.probe_rtt(now);
    }

    fn probe_rtt(&mut self, now: Time) {
        if self.mode != Mode::ProbeRtt && self.rt_prop_expired {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
            self.probe_rtt_done = None;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if self.in_flight <= self.min_cwnd() => {
                self.probe_rtt_done = Some(now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = self.sampler.delivered;
            }
            None => {}
            Some(done) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done && now > done {
                    self.rt_prop_stamp = now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.filled_pipe {
                        self.enter_probe_bw(now);
                    } else {
                        self.mode = Mode::Startup;
                        self.pacing_gain = HIGH_GAIN;
                        self.cwnd_gain = HIGH_GAIN;
                    }
                }
            }
        }
    }

    /// The window after an acknowledgement of `acked` bytes (the draft's BBRSetCwnd).
    fn update_cwnd(&mut self, acked: u64) {
        let target = self.bdp(self.cwnd_gain) + 3 * self.mtu;
        if let Some(until) = self.conserve_until {
            if self.round < until {
                self.cwnd = self.cwnd.max(self.in_flight + acked);
            } else {
                self.conserve_until = None;
                self.cwnd = self.cwnd.max(self.prior_cwnd);
            }
        } else if self.filled_pipe {
            self.cwnd = (self.cwnd + acked).min(target);
        } else if self.cwnd < target || self.sampler.delivered < self.initial_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(self.min_cwnd());
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.min_cwnd());
        }
    }

    fn set_pacing_rate(&mut self, srtt: Option<Duration>) {
        let rate = match self.btl_bw() {
            bw if bw > 0.0 => self.pacing_gain * bw,
            _ => {
                let rtt = srtt.map_or(0.001, |s| s.as_secs_f64().max(1e-6));
                HIGH_GAIN * self.initial_cwnd as f64 / rtt
            }
        };
        if self.filled_pipe || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }
}

impl CongestionControl for Bbr {
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        // BBR keeps no slow-start threshold (Linux reports TCP_INFINITE_SSTHRESH).
        u64::from(u32::MAX)
    }
    fn on_ack(&mut self, ack: &AckSignal, _all: &[CcPathView]) {
        let prior_in_flight = ack.flight_before;
        self.in_flight = ack.flight_before.saturating_sub(ack.bytes_acked);
        let s = self
            .sampler
            .on_ack(ack.now, ack.bytes_acked, self.rt_prop.or(ack.min_rtt));
        self.on_sample(ack.now, s);
        self.update_mode(ack.now, prior_in_flight);
        self.update_cwnd(ack.bytes_acked);
        self.set_pacing_rate(ack.srtt);
    }
    fn on_fast_retransmit(&mut self, _loss: &LossSignal) {
        if self.conserve_until.is_none() {
            self.prior_cwnd = self.cwnd;
            self.cwnd = self.cwnd.min(self.in_flight).max(self.min_cwnd());
            self.conserve_until = Some(self.round + 1);
        }
    }
    fn on_timeout(&mut self, _loss: &LossSignal) {
        self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        self.cwnd = self.mtu;
        self.conserve_until = None;
    }
    fn on_idle(&mut self, _mtu: u64, _initial_cwnd: u64) {
        // Pacing restarts an idle path at the model's rate; the window stands.
    }
    fn set_cwnd(&mut self, cwnd: u64) {
        self.cwnd = cwnd;
    }
    fn is_rate_based(&self) -> bool {
        true
    }
    fn on_sent(&mut self, now: Time, bytes: u64, flight: u64) {
        self.sampler.on_sent(now, bytes, flight);
        self.in_flight = flight + bytes;
    }
    fn pacing_rate(&self) -> Option<f64> {
        (self.pacing_rate > 0.0).then_some(self.pacing_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    const MTU: u64 = 1500;
    /// The pipe: 1.25 MB/s (10 Mbit/s), 40 ms round trip: a BDP of 50 KB.
    const RATE: f64 = 1.25e6;
    const RTT: Duration = Duration::from_millis(40);

    /// What the controller did at one moment.
    struct Step {
        at: f64,
        mode: Mode,
        gain: f64,
        cwnd: u64,
        flight: u64,
    }

    /// Drives a BBR sender over the pipe for `secs`, backlogged: each full packet
    /// leaves when the window and the pacing rate allow, is serialised at `RATE` in
    /// turn and acknowledged a round trip after it left the bottleneck.
    fn drive(secs: f64) -> (Bbr, Vec<Step>) {
        let init = CcInit {
            mtu: MTU,
            initial_cwnd: 4 * MTU,
            initial_ssthresh: u64::MAX,
        };
        let mut b = Bbr::new(&init);
        let (mut flight, mut free, mut next_send) = (0u64, 0.0f64, 0.0f64);
        let mut acks: VecDeque<(f64, u64)> = VecDeque::new();
        let mut steps = Vec::new();
        let mut t = 0.0;
        while t < secs {
            let now = Time::from_nanos((t * 1e9) as u64);
            let mut acked = 0;
            while acks.front().is_some_and(|&(at, _)| at <= t) {
                acked += acks.pop_front().expect("front").1;
            }
            if acked > 0 {
                let ack = AckSignal {
                    now,
                    bytes_acked: acked,
                    pba_bytes: acked,
                    flight_before: flight,
                    mtu: MTU,
                    srtt: Some(RTT),
                    min_rtt: Some(RTT),
                    newest_sent: None,
                };
                b.on_ack(&ack, &[]);
                flight -= acked;
            }
            while flight + MTU <= b.cwnd() && next_send <= t {
                let leaves = free.max(t) + MTU as f64 / RATE;
                free = leaves;
                acks.push_back((leaves + RTT.as_secs_f64(), MTU));
                b.on_sent(now, MTU, flight);
                flight += MTU;
                next_send = t + MTU as f64 / b.pacing_rate().expect("paced");
            }
            steps.push(Step {
                at: t,
                mode: b.mode(),
                gain: b.pacing_gain(),
                cwnd: b.cwnd(),
                flight,
            });
            t += 1e-4;
        }
        (b, steps)
    }

    /// Startup finds the bandwidth and hands over to ProbeBW within a second; ProbeBW
    /// cycles through its 5/4 and 3/4 gains and keeps in flight under two BDPs and
    /// three packets; after 10 s without a lower RTT sample ProbeRTT holds the window at
    /// four packets, for at least 200 ms, and returns to ProbeBW.
    #[test]
    fn the_state_machine_runs_its_course_on_a_steady_pipe() {
        let (b, steps) = drive(12.0);
        assert!(
            (b.btl_bw() / RATE - 1.0).abs() < 0.03,
            "BtlBw {}",
            b.btl_bw()
        );
        let first_bw = steps
            .iter()
            .find(|s| s.mode == Mode::ProbeBw)
            .expect("ProbeBW");
        assert!(first_bw.at < 1.0, "ProbeBW from {:.2} s", first_bw.at);
        let bdp = RATE * RTT.as_secs_f64();
        let cap = (2.0 * bdp) as u64 + 3 * MTU;
        for s in steps
            .iter()
            .filter(|s| s.mode == Mode::ProbeBw && s.at > 2.0)
        {
            assert!(s.flight <= cap, "{} in flight at {:.2} s", s.flight, s.at);
        }
        for g in [1.25, 0.75] {
            assert!(steps.iter().any(|s| s.mode == Mode::ProbeBw && s.gain == g));
        }
        let rtt: Vec<&Step> = steps.iter().filter(|s| s.mode == Mode::ProbeRtt).collect();
        let (from, to) = (
            rtt.first().expect("ProbeRTT").at,
            rtt.last().expect("one").at,
        );
        assert!((10.0..10.5).contains(&from), "ProbeRTT from {from:.2} s");
        assert!(to - from >= 0.2, "ProbeRTT for {:.3} s", to - from);
        assert!(rtt.iter().all(|s| s.cwnd == 4 * MTU));
        assert_eq!(steps.last().expect("steps").mode, Mode::ProbeBw);
    }

    /// The bandwidth filter keeps the largest sample of the last ten rounds.
    #[test]
    fn the_bandwidth_filter_forgets_after_ten_rounds() {
        let mut f = MaxFilter::default();
        f.update(1, 5.0);
        f.update(2, 3.0);
        assert_eq!(f.get(), 5.0);
        f.update(11, 2.0);
        assert_eq!(f.get(), 3.0, "round 1's sample left the window");
        f.update(12, 1.0);
        assert_eq!(f.get(), 2.0);
    }
}
