//! The two bounds of a run (docs/metrics.md), from this run's drawn link values and its
//! scheduled changes: the receive-buffer bound, and the congestion-control-aware bound,
//! in which each path carries at most what one standard sender sustains on it
//! ([`crate::reno_model`]) within what background traffic left of its capacity.
//!
//! Rates, delays, loss, link state and the paths that exist change only at scheduled
//! events (`[[events]]`), so a run is a sequence of stretches with fixed values; each
//! bound is the mean of the stretches' bounds within the measured window, weighted by
//! their length. An event at 0 s (loss on one direction, say) counts from the start; a
//! link that is down, or a path without its address, carries nothing while it lasts.

use cmt_core::Duration;

use super::{forward_loss, LossMeasure, Simulation};
use crate::bound::{rbuf_bound, PathCapacity};
use crate::ids::LinkDir;
use crate::reno_model::{reno_rate, startup_excess, RenoPath};

/// One link direction's values during a stretch.
#[derive(Clone, Debug)]
struct LinkNow {
    rate_bps: u64,
    delay: Duration,
    /// Bernoulli loss probability (the drawn one until an event sets another).
    bernoulli: f64,
    down: bool,
}

/// A stretch of the run with fixed network values.
#[derive(Clone, Debug)]
struct Stretch {
    from: Duration,
    to: Duration,
    /// Per link direction.
    links: Vec<LinkNow>,
    /// Per path: its address exists.
    present: Vec<bool>,
}

impl Simulation {
    /// The stretches of `[0, over)`: the values the run started with, then each
    /// scheduled change (link or path) applied at its time.
    fn stretches(&self, over: Duration) -> Vec<Stretch> {
        let built = &self.built;
        let mut links: Vec<LinkNow> = self
            .start_params
            .iter()
            .enumerate()
            .map(|(d, p)| LinkNow {
                rate_bps: p.rate_bps,
                delay: p.delay,
                bernoulli: if built.links[d / 2].loss_direction.applies(d % 2 == 1) {
                    self.drawn[d / 2].loss
                } else {
                    0.0
                },
                down: false,
            })
            .collect();
        let mut present: Vec<bool> = built.paths.iter().map(|p| p.present).collect();
        let mut out = Vec::new();
        let mut from = Duration::ZERO;
        for e in built.events.iter().take_while(|e| e.at < over) {
            if e.at > from {
                out.push(Stretch {
                    from,
                    to: e.at,
                    links: links.clone(),
                    present: present.clone(),
                });
                from = e.at;
            }
            if let Some((p, added)) = e.path {
                present[p] = added;
            }
            for &d in &e.links {
                let l = &mut links[d];
                let c = &e.change;
                l.rate_bps = c.rate_bps.unwrap_or(l.rate_bps);
                l.delay = c.delay.unwrap_or(l.delay);
                l.bernoulli = c.loss.unwrap_or(l.bernoulli);
                l.down = c.down.unwrap_or(l.down);
            }
        }
        out.push(Stretch {
            from,
            to: over,
            links,
            present,
        });
        out
    }

    /// A directional link's rate during stretch `s`, bits/s: 0 while it is down; a
    /// traced link's mean over the stretch.
    fn link_rate_bps(&self, l: LinkDir, s: &Stretch) -> f64 {
        let now = &s.links[l.0];
        if now.down {
            return 0.0;
        }
        match &self.start_params[l.0].trace {
            None => now.rate_bps as f64,
            Some(t) if s.from == Duration::ZERO => t.mean_rate_bps_over(s.to),
            Some(t) => {
                let (a, b) = (s.from.as_secs_f64(), s.to.as_secs_f64());
                let offered = t.mean_rate_bps_over(s.to) * b - t.mean_rate_bps_over(s.from) * a;
                offered / (b - a)
            }
        }
    }

    /// Per path during stretch `s`: goodput capacity (the slowest forward link, times
    /// the payload share of a full packet; nothing while a link of the path is down or
    /// its address is gone) and base RTT (propagation both ways plus serialisation of
    /// a full packet and a SACK).
    fn path_capacities(&self, s: &Stretch) -> Vec<PathCapacity> {
        let cfg = &self.built.config;
        let payload = cfg.max_payload() as f64;
        let pkt = (cfg.mtu) as f64;
        let sack = 20.0 + 12.0 + 16.0 + cfg.ip_header_len as f64;
        (0..self.built.paths.len())
            .map(|p| (p, &self.routes[2 * p], &self.routes[2 * p + 1]))
            .map(|(p, fwd, rev)| {
                let rate = fwd
                    .iter()
                    .map(|&l| self.link_rate_bps(l, s))
                    .fold(f64::INFINITY, f64::min);
                let usable = s.present[p] && rev.iter().all(|&l| !s.links[l.0].down);
                let rate = if rate.is_finite() && usable {
                    rate
                } else {
                    0.0
                };
                let mut rtt = 0.0;
                for &l in fwd {
                    let now = &s.links[l.0];
                    rtt += now.delay.as_secs_f64() + pkt * 8.0 / now.rate_bps as f64;
                }
                for &l in rev {
                    let now = &s.links[l.0];
                    rtt += now.delay.as_secs_f64() + sack * 8.0 / now.rate_bps as f64;
                }
                PathCapacity {
                    goodput_bps: rate / 8.0 * payload / pkt,
                    rtt_s: rtt,
                }
            })
            .collect()
    }

    /// The length-weighted mean, Mbit/s, of `bound` (bytes/s) over the stretches of a
    /// run that measured `over`.
    fn over_stretches(&self, over: Duration, bound: impl Fn(&Stretch, usize) -> f64) -> f64 {
        let stretches = self.stretches(over);
        let total = over.as_secs_f64();
        let mut sum = 0.0;
        for (i, s) in stretches.iter().enumerate() {
            let weight = if total > 0.0 {
                s.to.saturating_sub(s.from).as_secs_f64() / total
            } else {
                1.0
            };
            sum += weight * bound(s, i);
        }
        sum * 8.0 / 1e6
    }

    /// The receive-buffer bound for this run's drawn link values and scheduled changes,
    /// Mbit/s of goodput, for a run that measured `over` of simulated time: a link that
    /// follows a capacity trace counts the capacity the trace offers in that window.
    pub fn bound_mbps(&self, over: Duration) -> f64 {
        let rbuf = self.built.config.rbuf as f64;
        self.over_stretches(over, |s, _| rbuf_bound(&self.path_capacities(s), rbuf))
    }

    /// The congestion-control-aware bound, Mbit/s of goodput: per path and stretch the
    /// smaller of what background traffic left of its capacity in this run and the rate
    /// one standard sender sustains under the stretch's loss, with its start-up spread
    /// over the `over` the run measured (docs/metrics.md), filled under the receive
    /// buffer as in [`bound_mbps`](Self::bound_mbps).
    pub fn cc_bound_mbps(&self, over: Duration) -> f64 {
        let rbuf = self.built.config.rbuf as f64;
        let left: Vec<f64> = (0..self.built.paths.len())
            .map(|p| self.background_share(p, over))
            .collect();
        self.over_stretches(over, |s, i| {
            let caps: Vec<PathCapacity> = self
                .path_capacities(s)
                .into_iter()
                .enumerate()
                .map(|(p, c)| {
                    let m = self.reno_path(p, c.rtt_s, s);
                    // No round trip delivers more than the buffer or the path's share of
                    // capacity times the base RTT.
                    let bdp = c.goodput_bps * left[p] * c.rtt_s;
                    let cap = m.rbuf_bytes.min(bdp) / m.mss_bytes;
                    // Start-up happens once, in the first stretch.
                    let startup = if i == 0 {
                        startup_excess(&m, cap) * m.mss_bytes
                            / s.to.saturating_sub(s.from).as_secs_f64().max(1e-9)
                    } else {
                        0.0
                    };
                    let model = reno_rate(&m) + startup;
                    PathCapacity {
                        goodput_bps: (c.goodput_bps * left[p]).min(model),
                        rtt_s: c.rtt_s,
                    }
                })
                .collect();
            rbuf_bound(&caps, rbuf)
        })
    }

    /// The fraction of path `p`'s capacity that background traffic left it in this
    /// run, on its tightest forward link: each link's rate less what the background
    /// flows crossing it delivered over `over` (open-loop and TCP-like alike; what
    /// competitors actually took, so no fairness is assumed).
    fn background_share(&self, p: usize, over: Duration) -> f64 {
        let span = over.as_secs_f64();
        let rec = self.rec.borrow();
        let whole = Stretch {
            from: Duration::ZERO,
            to: over,
            links: self
                .start_params
                .iter()
                .map(|q| LinkNow {
                    rate_bps: q.rate_bps,
                    delay: q.delay,
                    bernoulli: 0.0,
                    down: false,
                })
                .collect(),
            present: vec![true; self.built.paths.len()],
        };
        let path_rate = self.routes[2 * p]
            .iter()
            .map(|&l| self.link_rate_bps(l, &whole))
            .fold(f64::INFINITY, f64::min);
        let left = self.routes[2 * p]
            .iter()
            .map(|&l| {
                let taken: f64 = self
                    .built
                    .traffic
                    .iter()
                    .zip(&rec.flows)
                    .filter(|(t, _)| t.route.contains(&l.0))
                    .map(|(_, c)| c.delivered_bytes as f64 * 8.0 / span)
                    .sum();
                (self.link_rate_bps(l, &whole) - taken).max(0.0)
            })
            .fold(f64::INFINITY, f64::min);
        if path_rate.is_finite() && path_rate > 0.0 && span > 0.0 {
            (left / path_rate).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The standard-sender model's inputs for path `p` during stretch `s`: its loss
    /// (Bernoulli as drawn or as an event set it, and Gilbert in series), the least
    /// lossy path's for retransmissions, RTO from RTO.Min/Max and the path's jitter,
    /// the payload per packet and the receive buffer; whether CMT's CUC lets the
    /// window grow during recovery.
    fn reno_path(&self, p: usize, rtt_s: f64, s: &Stretch) -> RenoPath {
        let built = &self.built;
        let cfg = &built.config;
        let links = &built.paths[p].links;
        let forward = |l: usize| s.links[2 * l].bernoulli;
        // RTTVAR from the links' jitter (standard deviations add in quadrature).
        let jitter: f64 = links
            .iter()
            .map(|&l| built.links[l].jitter.as_secs_f64().powi(2) * 2.0)
            .sum::<f64>()
            .sqrt();
        let rto = (rtt_s + 4.0 * jitter)
            .max(cfg.rto_min.as_secs_f64())
            .min(cfg.rto_max.as_secs_f64());
        RenoPath {
            rtt_s,
            rto_s: rto,
            mss_bytes: cfg.max_payload() as f64,
            packet_loss: forward_loss(built, &forward, links, LossMeasure::Packets),
            episode_rate: forward_loss(built, &forward, links, LossMeasure::Episodes),
            retransmission_loss: built
                .paths
                .iter()
                .map(|q| forward_loss(built, &forward, &q.links, LossMeasure::Packets))
                .fold(1.0, f64::min),
            rbuf_bytes: cfg.rbuf as f64,
            // CUC lets a path grow while its loss is repaired once the retransmission
            // can leave on another path (the favourable case, as a bound takes).
            grows_in_recovery: cfg.cuc && built.paths.len() > 1,
            initial_window: cfg.initial_cwnd() as f64 / cfg.cwnd_unit() as f64,
        }
    }
}
