//! One path's model fitted to what its packets did (docs/calibrate.md has the method and
//! its limits):
//!
//! * **capacity** — from *busy periods*: a packet that left before the one ahead of it
//!   could have arrived (its send time plus the path's smallest one-way delay is no
//!   later than that one's arrival) waited behind it, so the gap between the two
//!   arrivals is the bottleneck's time to send it. Bytes over time across every run of
//!   such packets give the rate, whatever the congestion controller did in between
//!   (the packet-pair idea of Keshav 1991 and Dovrolis et al. 2004, applied to every
//!   queued packet). Bytes are the IP packet's (SCTP plus the given per-packet header);
//!   the 95 % interval comes from the rate of each second's busy periods.
//! * **delay noise** — the delay above the smallest of packets that found the
//!   bottleneck empty: what a forwarder after it (a userspace relay releasing on a
//!   timer) or the receiver's read timing adds. A packet counts as queued only when it
//!   left earlier than the one ahead could have arrived by more than the noise's 90th
//!   percentile, a busy period only when twenty times longer; the scenario gets a
//!   half-normal jitter of the noise's mean.
//! * **one-way delay** — half the smallest round trip a SACK measured on the path (the
//!   TSN it acknowledges cumulatively sent once, on this path), less the time the
//!   packet queued and the packet's and the SACK's time on the wire at that rate; then
//!   (across paths, [`super::calibrate`]) the smallest one-way delay less the two
//!   clocks' offset, which is the same on every path: the largest offset no path's
//!   round trip contradicts.
//! * **queue** — the queueing delay (one-way delay less its smallest value) the
//!   queue's drops met, their median, in packets at that rate; a queue never seen to
//!   overflow is given twice the most it held. Drops are told apart with the 99th
//!   percentile of the queueing delay as the queue's depth.
//! * **loss** — packets lost while the queue was below 70 % of that depth (judged, for
//!   every packet alike, by the delivered packet sent just before it) are random losses, counted against every packet sent then (a Wilson 95 % interval); those lost
//!   with the queue near full are the queue's drops, which the simulated queue makes
//!   itself. Random losses in runs longer than 1.5 on average (30 or more) are fitted
//!   as Gilbert–Elliott: `r = 1/mean run`, `p = π·r/(1 − π)` for the loss share π.

use super::matched::{match_path, Fate};
use super::observed::{sctp_bytes, PathObs, Pkt};
use crate::stats::{ci95_half_width, mean};
use crate::sweep::CiMethod;

/// A Gilbert–Elliott model (good → bad `p`, bad → good `r`, every packet lost in bad).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Gilbert {
    /// Good → bad per packet.
    pub p: f64,
    /// Bad → good per packet.
    pub r: f64,
}

/// A path's fitted model.
#[derive(Clone, Debug, PartialEq)]
pub struct PathFit {
    /// The sender's name of the path.
    pub name: String,
    /// DATA packets sent and arrived.
    pub sent: usize,
    /// DATA packets that arrived.
    pub arrived: usize,
    /// Capacity, bit/s of IP packets, if any packet queued behind another.
    pub rate_bps: Option<f64>,
    /// Its 95 % half-width (from per-second samples; `None` below two seconds).
    pub rate_ci_bps: Option<f64>,
    /// Seconds of busy periods the rate was read from.
    pub busy_s: f64,
    /// Smallest round trip measured by a SACK, s.
    pub rtt_min_s: Option<f64>,
    /// One-way propagation delay, s: the smallest one-way delay less the clocks'
    /// offset (set for all paths by [`super::calibrate`]), else from the round trip.
    pub delay_s: f64,
    /// One-way propagation delay from this path's round trip alone, s (half the
    /// smallest, less the packet's and the SACK's time on the wire).
    pub delay_rtt_s: Option<f64>,
    /// The smallest one-way delay less one packet's time on the wire, s, with the
    /// offset between the two ends' clocks in it.
    pub owd_floor_s: f64,
    /// The delay's variation outside the queue, as the σ of a half-normal jitter (of
    /// the same mean), s: a forwarder after the bottleneck that releases late, the
    /// receiver's read timing.
    pub jitter_s: f64,
    /// Queue limit, packets waiting (the one being sent excluded).
    pub queue: u32,
    /// Random losses, and the packets sent while they could happen.
    pub random_losses: usize,
    /// Packets sent with the queue below the near-full mark.
    pub exposed: usize,
    /// The queue's drops (losses with the queue near full).
    pub queue_drops: usize,
    /// Random loss share and its Wilson 95 % interval.
    pub loss: (f64, f64, f64),
    /// Mean length of a run of consecutive random losses.
    pub loss_run: f64,
    /// The Gilbert–Elliott model when losses come in runs.
    pub gilbert: Option<Gilbert>,
    /// Busy periods: (start, end, bytes delivered after the start), receiver's clock.
    pub busy: Vec<(f64, f64, f64)>,
    /// First and last arrival, receiver's clock.
    pub span: (f64, f64),
}

impl PathFit {
    /// Whether the queue was seen to overflow (else `queue` was set from what it held).
    pub fn queue_overflowed(&self) -> bool {
        self.queue_drops > 0
    }
}

/// The Wilson score 95 % interval of `k` successes in `n`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let (z, n, p) = (1.959_963_984_540_054_f64, n as f64, k as f64 / n as f64);
    let c = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let h = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    let lo = if k == 0 { 0.0 } else { (c - h).max(0.0) };
    (lo, (c + h).min(1.0))
}

/// The `q`-quantile (0..1) of `xs` (sorted here), or `None`.
fn quantile(xs: &mut [f64], q: f64) -> Option<f64> {
    xs.sort_by(f64::total_cmp);
    let i = ((xs.len() as f64 - 1.0) * q).round() as usize;
    xs.get(i).copied()
}

/// The path's delay noise that is not queueing at the bottleneck (a forwarder after it
/// that releases packets late, timestamps taken by an application), from the delay
/// above the smallest of packets that found the bottleneck empty — sent later than the
/// packet sent just before them (which arrived) could have left it, by `ser`, one
/// packet's time on its wire — when there are 20 or more (else none): its 90th
/// percentile, and the σ of the half-normal jitter of the same mean (mean / √(2/π)).
fn delay_noise(p: &PathObs, sent_at: &[Option<usize>], owd_min: f64, ser: f64) -> (f64, f64) {
    let mut q: Vec<f64> = (1..p.arrived.len())
        .filter_map(|j| {
            let (i, k) = (sent_at[j]?, sent_at[j - 1]?);
            let s = &p.sent[i];
            (k + 1 == i && s.t + owd_min > p.arrived[j - 1].t + ser)
                .then(|| p.arrived[j].t - s.t - owd_min)
        })
        .collect();
    if q.len() < 20 {
        return (0.0, 0.0);
    }
    let sigma = mean(&q).unwrap_or(0.0).max(0.0) / (2.0 / std::f64::consts::PI).sqrt();
    (quantile(&mut q, 0.9).unwrap_or(0.0).max(0.0), sigma)
}

/// Busy periods of the arrivals `arrived`, which were the packets `sent_at` of `sent`,
/// with the path's smallest one-way delay `owd_min` and its delay noise `noise`:
/// (start, end, bytes after the start). `lost_before[i]`: bytes of packets lost after
/// the bottleneck among the first `i` sent (they used its time between two arrivals).
fn busy_periods(
    p: &PathObs,
    sent_at: &[Option<usize>],
    (owd_min, noise): (f64, f64),
    lost_before: &[f64],
    wire: impl Fn(&Pkt) -> f64,
) -> Vec<(f64, f64, f64)> {
    let arrived = &p.arrived;
    let mut out = Vec::new();
    let mut run: Option<(f64, f64, f64)> = None;
    for j in 1..arrived.len() {
        // Sent before the one ahead could have arrived, by more than the noise that
        // could have made that one late without a queue: it waited behind it.
        let queued = sent_at[j].is_some_and(|s| p.sent[s].t + owd_min + noise <= arrived[j - 1].t)
            && arrived[j].t >= arrived[j - 1].t;
        let lost = match (sent_at[j - 1], sent_at[j]) {
            (Some(a), Some(b)) if b > a => lost_before[b] - lost_before[a + 1],
            _ => 0.0,
        };
        let bytes = wire(&arrived[j]) + lost;
        match (&mut run, queued) {
            (Some(r), true) => {
                r.1 = arrived[j].t;
                r.2 += bytes;
            }
            (None, true) => run = Some((arrived[j - 1].t, arrived[j].t, bytes)),
            (_, false) => out.extend(run.take()),
        }
    }
    out.extend(run);
    // A period's ends are each off by up to the noise: one at least twenty times as
    // long reads the rate within about a tenth.
    out.retain(|r| r.1 - r.0 > (20.0 * noise).max(0.0));
    out
}

/// The capacity over busy periods and its 95 % half-width from per-second rates.
fn capacity(busy: &[(f64, f64, f64)]) -> (Option<f64>, Option<f64>, f64) {
    let (bytes, secs) = busy
        .iter()
        .fold((0.0, 0.0), |(b, s), r| (b + r.2, s + r.1 - r.0));
    if secs <= 0.0 {
        return (None, None, 0.0);
    }
    // A busy period that spans seconds gives each its share (the bottleneck sent at
    // one rate throughout), so that one long period is several samples, not one.
    let mut bins: std::collections::BTreeMap<i64, (f64, f64)> = Default::default();
    for &(start, end, bytes) in busy {
        for sec in start.floor() as i64..=end.floor() as i64 {
            let part = end.min(sec as f64 + 1.0) - start.max(sec as f64);
            if part > 0.0 {
                let e = bins.entry(sec).or_default();
                e.0 += bytes * part / (end - start);
                e.1 += part;
            }
        }
    }
    // Seconds with at least 50 ms of busy time give a rate each.
    let per_second: Vec<f64> = bins
        .values()
        .filter(|(_, s)| *s >= 0.05)
        .map(|(b, s)| b * 8.0 / s)
        .collect();
    let ci = ci95_half_width(&per_second, CiMethod::T);
    (Some(bytes * 8.0 / secs), ci, secs)
}

/// The smallest round trip a SACK on this path measured, less the time its packet
/// queued: the SACK arrived on the path and cumulatively acknowledged a TSN sent once
/// in all (`sends`: per TSN, transmissions on every path), on this path.
fn rtt_min(p: &PathObs, fates: &[Fate], owd_min: f64, sends: &Sends) -> Option<f64> {
    let once: std::collections::BTreeMap<u64, (f64, f64)> = p
        .sent
        .iter()
        .zip(fates)
        .filter(|(s, _)| sends.get(&s.tsn) == Some(&1))
        .filter_map(|(s, f)| match f {
            Fate::Arrived(d) => Some((s.tsn, (s.t, d - owd_min))),
            _ => None,
        })
        .collect();
    p.acks
        .iter()
        .filter_map(|(t, cum)| once.get(cum).map(|(s, q)| t - s - q))
        .filter(|r| *r >= 0.0)
        .min_by(f64::total_cmp)
}

/// How the losses of a path divide.
struct Losses {
    /// Per packet sent: lost at random (not by the queue).
    random: Vec<bool>,
    /// Packets sent while random losses could happen (the queue below the mark).
    exposed: usize,
    /// Losses with the queue at or above the mark.
    drops: usize,
    /// Packets sent with the queue at or above the mark.
    full: usize,
    /// The queueing delay each of the queue's drops met (s).
    at_drops: Vec<f64>,
}

/// Random losses (lost with the queueing delay before them below `mark`), the packets
/// exposed to them, and the losses and packets at or above it.
fn classify(fates: &[Fate], owd_min: f64, mark: f64) -> Losses {
    let q = |f: &Fate| match f {
        Fate::Arrived(d) => Some(d - owd_min),
        _ => None,
    };
    // Per packet, lost or not, the queue it met: that of the nearest delivered packet
    // sent before it (within 64; else after it). The same rule for both, so that lost
    // packets do not look fuller than delivered ones by how they are judged.
    let near = |i: usize| -> Option<f64> {
        let before = fates[i.saturating_sub(64)..i].iter().rev().find_map(q);
        before.or_else(|| fates[i + 1..(i + 65).min(fates.len())].iter().find_map(q))
    };
    let mut l = Losses {
        random: vec![false; fates.len()],
        exposed: 0,
        drops: 0,
        full: 0,
        at_drops: Vec::new(),
    };
    let mut drop_at = Vec::new();
    for (i, f) in fates.iter().enumerate() {
        if *f == Fate::Unknown {
            continue;
        }
        let Some(met) = near(i) else { continue };
        let lost = *f == Fate::Lost;
        if met >= mark {
            l.full += 1;
            if lost {
                l.drops += 1;
                drop_at.push(i);
                l.at_drops.push(met);
            }
        } else {
            l.exposed += 1;
            l.random[i] = lost;
        }
    }
    // Losses at the mark no likelier than below it are random ones too (the queue was
    // not seen to overflow): more than two standard deviations above the count the
    // random share predicts, plus one, are needed to call them drops.
    let random = l.random.iter().filter(|x| **x).count() as f64;
    let expect = random / l.exposed.max(1) as f64 * l.full as f64;
    if (l.drops as f64) <= expect + 2.0 * expect.sqrt() + 1.0 {
        for i in drop_at {
            l.random[i] = true;
        }
        l.exposed += l.full;
        (l.drops, l.full) = (0, 0);
        l.at_drops.clear();
    }
    l
}

/// Mean length of the runs of consecutive `true`s (0 without any).
fn mean_run(xs: &[bool]) -> f64 {
    let runs =
        xs.windows(2).filter(|w| w[1] && !w[0]).count() + usize::from(xs.first() == Some(&true));
    let n = xs.iter().filter(|x| **x).count();
    if runs == 0 {
        0.0
    } else {
        n as f64 / runs as f64
    }
}

/// Per TSN (of a packet's first chunk), how often it was sent, on every path.
pub type Sends = std::collections::BTreeMap<u64, usize>;

/// Fits one path; `ip_header`: bytes below SCTP per packet; `sends`: the transfer's
/// transmissions per TSN.
pub fn fit_path(p: &PathObs, ip_header: u64, sends: &Sends) -> PathFit {
    let (fates, sent_at) = match_path(p);
    let wire = |k: &Pkt| (ip_header + sctp_bytes(k.chunks, k.bytes)) as f64;
    let mut owds: Vec<f64> = fates
        .iter()
        .filter_map(|f| match f {
            Fate::Arrived(d) => Some(*d),
            _ => None,
        })
        .collect();
    let owd_min = owds.iter().copied().min_by(f64::total_cmp).unwrap_or(0.0);
    let no_losses = vec![0.0; p.sent.len() + 1];
    let pkt_bytes = mean(&p.arrived.iter().map(wire).collect::<Vec<_>>()).unwrap_or(1500.0);
    // One packet's time on the wire at the rate read without allowing for noise (too
    // fast, if anything: the margin it gives is a lower bound).
    let rough = capacity(&busy_periods(p, &sent_at, (owd_min, 0.0), &no_losses, wire)).0;
    let ser0 = rough.map_or(0.0, |r| pkt_bytes * 8.0 / r);
    let (noise, jitter) = delay_noise(p, &sent_at, owd_min, ser0);
    let first = if noise > 0.0 {
        capacity(&busy_periods(
            p,
            &sent_at,
            (owd_min, noise),
            &no_losses,
            wire,
        ))
        .0
    } else {
        rough
    };
    let q99 = quantile(&mut owds, 0.99).map_or(0.0, |x| x - owd_min);
    let q_max = owds.last().map_or(0.0, |x| x - owd_min);
    let queue_at = |rate: Option<f64>| {
        let ser = rate.map_or(f64::INFINITY, |r| pkt_bytes * 8.0 / r);
        (q99 / ser - 1.0).round().max(0.0)
    };
    // A queue of at least two packets can be told from timing noise.
    let mark = if queue_at(first) >= 2.0 {
        0.7 * q99
    } else {
        f64::INFINITY
    };
    let l = classify(&fates, owd_min, mark);
    let mut lost_before = vec![0.0];
    for (s, lost) in p.sent.iter().zip(&l.random) {
        let last = lost_before[lost_before.len() - 1];
        lost_before.push(last + if *lost { wire(s) } else { 0.0 });
    }
    let busy = busy_periods(p, &sent_at, (owd_min, noise), &lost_before, wire);
    let (rate, rate_ci, busy_s) = capacity(&busy);
    let random = l.random.iter().filter(|x| **x).count();
    let share = random as f64 / l.exposed.max(1) as f64;
    let (lo, hi) = wilson(random, l.exposed);
    let loss_run = mean_run(&l.random);
    let gilbert = (random >= 30 && loss_run >= 1.5 && share < 1.0).then(|| {
        let r = 1.0 / loss_run;
        Gilbert {
            p: share * r / (1.0 - share),
            r,
        }
    });
    let rtt = rtt_min(p, &fates, owd_min, sends);
    let ser = |bytes: f64| rate.map_or(0.0, |r| bytes * 8.0 / r);
    let sack = (ip_header + 12 + 16) as f64;
    let delay = rtt.map(|r| ((r - ser(pkt_bytes) - ser(sack)) / 2.0).max(0.0));
    PathFit {
        name: p.name.clone(),
        sent: p.sent.len(),
        arrived: p.arrived.len(),
        rate_bps: rate,
        rate_ci_bps: rate_ci,
        busy_s,
        rtt_min_s: rtt,
        delay_s: delay.unwrap_or(0.0),
        delay_rtt_s: delay,
        owd_floor_s: owd_min - ser(pkt_bytes),
        jitter_s: jitter,
        // The queue the drops met (its median: a full queue, robust to timing
        // outliers); one never seen to overflow did not limit the measured transfer:
        // twice the most it held keeps it from limiting the simulated one. At least
        // one packet: a scenario's queue holds one or more (a path that never queued
        // held none).
        queue: if let Some(full) = quantile(&mut l.at_drops.clone(), 0.5) {
            (full / ser(pkt_bytes).max(1e-9)).round()
        } else {
            (2.0 * q_max / ser(pkt_bytes).max(1e-9)).ceil()
        }
        .clamp(1.0, 1e6) as u32,
        random_losses: random,
        exposed: l.exposed,
        queue_drops: l.drops,
        loss: (share, lo, hi),
        loss_run,
        gilbert,
        busy,
        span: (
            p.arrived.first().map_or(0.0, |a| a.t),
            p.arrived.last().map_or(0.0, |a| a.t),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wilson_interval_holds_the_share_and_stays_inside_zero_and_one() {
        let (lo, hi) = wilson(10, 1000);
        assert!(lo < 0.01 && 0.01 < hi, "{lo} {hi}");
        // The textbook value for 10 of 1000: 0.0054 to 0.0183.
        assert!((lo - 0.0054).abs() < 2e-4 && (hi - 0.0183).abs() < 2e-4);
        assert_eq!(wilson(0, 100).0, 0.0);
        assert_eq!(wilson(0, 0), (0.0, 1.0));
    }

    fn pkt(t: f64, tsn: u64) -> Pkt {
        Pkt {
            t,
            tsn,
            bytes: 1188,
            chunks: 1,
        }
    }

    /// Packets a second apart never queue: no busy period, so no capacity is claimed.
    #[test]
    fn a_path_that_never_queued_has_no_capacity_estimate() {
        let p = PathObs {
            sent: (0..5).map(|i| pkt(i as f64, i)).collect(),
            arrived: (0..5).map(|i| pkt(i as f64 + 0.02, i)).collect(),
            ..PathObs::default()
        };
        let sends = p.sent.iter().map(|s| (s.tsn, 1)).collect();
        let f = fit_path(&p, 28, &sends);
        assert_eq!(f.rate_bps, None);
        assert!(f.busy.is_empty());
        // It held nothing, yet a scenario's queue holds at least one packet.
        assert_eq!(f.queue, 1);
    }

    /// A forwarder after the bottleneck that releases what it holds every 5 ms: packets
    /// sent 2 ms apart over a 10 Mbit/s bottleneck (1 ms a packet) never queue there,
    /// yet arrive in bunches, late by up to 5 ms. Read as queued, a bunch would be a
    /// link of unbounded rate; allowing for the path's delay noise, no busy period is
    /// claimed, and the lateness becomes the path's jitter: a half-normal whose mean
    /// (σ·√(2/π)) lies within the lateness, above 1 ms and at most 5 ms.
    #[test]
    fn bunched_arrivals_after_the_bottleneck_are_jitter_not_capacity() {
        // Released every 5 ms, back to back 0.1 ms apart on a fast link.
        let mut arrived: Vec<Pkt> = Vec::new();
        for i in 0..200u64 {
            let mut t = (((0.002 * i as f64 + 0.011) / 0.005) - 1e-9).ceil() * 0.005;
            if let Some(last) = arrived.last() {
                t = t.max(last.t + 0.0001);
            }
            arrived.push(pkt(t, i));
        }
        let p = PathObs {
            sent: (0..200).map(|i| pkt(0.002 * i as f64, i)).collect(),
            arrived,
            ..PathObs::default()
        };
        let sends = p.sent.iter().map(|s| (s.tsn, 1)).collect();
        let f = fit_path(&p, 28, &sends);
        assert_eq!(f.rate_bps, None, "{:?}", f.busy);
        let mean = f.jitter_s * (2.0 / std::f64::consts::PI).sqrt();
        assert!(mean > 0.001 && mean <= 0.005, "{}", f.jitter_s);
    }

    /// One busy period of three seconds is three samples of the rate, not one.
    #[test]
    fn a_long_busy_period_gives_a_sample_each_second() {
        let (rate, ci, secs) = capacity(&[(0.5, 3.5, 3.0 * 1e6 / 8.0)]);
        assert_eq!((rate, secs), (Some(1e6), 3.0));
        // Four seconds with 0.5, 1, 1 and 0.5 s busy at the same rate: no spread.
        assert!(ci.is_some_and(|c| c.abs() < 1e-6), "{ci:?}");
        let (_, one, _) = capacity(&[(0.2, 0.9, 1e5)]);
        assert_eq!(one, None, "one sample has no interval");
    }

    /// A 1 Mbit/s bottleneck with 10 ms one-way delay fed 20 packets at once: each
    /// 1244-byte IP packet (28 + 12 + 16 + 1188) takes 9.952 ms, and every packet after
    /// the first queued.
    #[test]
    fn packets_sent_in_a_burst_give_the_bottleneck_rate() {
        let ser = 1244.0 * 8.0 / 1e6;
        let p = PathObs {
            sent: (0..20).map(|i| pkt(0.0, i)).collect(),
            arrived: (0..20)
                .map(|i| pkt(0.010 + ser * (i + 1) as f64, i))
                .collect(),
            ..PathObs::default()
        };
        let sends = p.sent.iter().map(|s| (s.tsn, 1)).collect();
        let f = fit_path(&p, 28, &sends);
        let rate = f.rate_bps.expect("busy periods");
        assert!((rate - 1e6).abs() < 1.0, "{rate}");
        assert_eq!(f.queue_drops + f.random_losses, 0);
        // The last packet waited 19 packet times; the queue never overflowed, so it
        // is given twice that.
        assert!(!f.queue_overflowed());
        assert!((38..=39).contains(&f.queue), "{}", f.queue);
    }
}
