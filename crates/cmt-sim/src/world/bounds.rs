//! The two bounds of a run (docs/metrics.md), from this run's drawn link values: the
//! receive-buffer bound, and the congestion-control-aware bound, in which each path
//! carries at most what one standard sender sustains on it
//! ([`crate::reno_model`]) within what background traffic left of its capacity.

use cmt_core::Duration;

use super::{configured_loss, forward_loss, LossMeasure, Simulation};
use crate::bound::{rbuf_bound, PathCapacity};
use crate::ids::LinkDir;
use crate::reno_model::{reno_rate, startup_excess, RenoPath};

impl Simulation {
    /// Per path: goodput capacity (the slowest forward link, a traced link at what its
    /// trace offers during `over`, times the payload share of a full packet) and base
    /// RTT (propagation both ways plus serialisation of a full packet and a SACK).
    fn path_capacities(&self, over: Duration) -> Vec<PathCapacity> {
        let cfg = &self.built.config;
        let payload = cfg.max_payload() as f64;
        let pkt = (cfg.mtu) as f64;
        let sack = 20.0 + 12.0 + 16.0 + cfg.ip_header_len as f64;
        (0..self.built.paths.len())
            .map(|p| (&self.routes[2 * p], &self.routes[2 * p + 1]))
            .map(|(fwd, rev)| {
                let rate = fwd
                    .iter()
                    .map(|&l| self.link_rate_bps(l, over))
                    .fold(f64::INFINITY, f64::min);
                let rate = if rate.is_finite() { rate } else { 0.0 };
                let mut rtt = 0.0;
                for &l in fwd {
                    rtt += self.links[l].params().delay.as_secs_f64()
                        + pkt * 8.0 / self.links[l].params().rate_bps as f64;
                }
                for &l in rev {
                    rtt += self.links[l].params().delay.as_secs_f64()
                        + sack * 8.0 / self.links[l].params().rate_bps as f64;
                }
                PathCapacity {
                    goodput_bps: rate / 8.0 * payload / pkt,
                    rtt_s: rtt,
                }
            })
            .collect()
    }

    /// A directional link's rate, bits/s; a traced link's mean over `over`.
    fn link_rate_bps(&self, l: LinkDir, over: Duration) -> f64 {
        let p = self.links[l].params();
        p.trace
            .as_ref()
            .map_or(p.rate_bps as f64, |t| t.mean_rate_bps_over(over))
    }

    /// The receive-buffer bound for this run's drawn link values, Mbit/s of goodput, for
    /// a run that measured `over` of simulated time: a link that follows a capacity
    /// trace counts the capacity the trace offers in that window.
    pub fn bound_mbps(&self, over: Duration) -> f64 {
        rbuf_bound(&self.path_capacities(over), self.built.config.rbuf as f64) * 8.0 / 1e6
    }

    /// The congestion-control-aware bound, Mbit/s of goodput: per path the smaller of
    /// what background traffic left of its capacity in this run and the rate one
    /// standard sender sustains under its loss, with its start-up spread over the
    /// `over` the run measured (docs/metrics.md), filled under the receive buffer as in
    /// [`bound_mbps`](Self::bound_mbps).
    pub fn cc_bound_mbps(&self, over: Duration) -> f64 {
        let caps: Vec<PathCapacity> = self
            .path_capacities(over)
            .into_iter()
            .enumerate()
            .map(|(p, c)| {
                let left = self.background_share(p, over);
                let m = self.reno_path(p, c.rtt_s);
                // No round trip delivers more than the buffer or the path's share of
                // capacity times the base RTT.
                let bdp = c.goodput_bps * left * c.rtt_s;
                let cap = m.rbuf_bytes.min(bdp) / m.mss_bytes;
                let startup = startup_excess(&m, cap) * m.mss_bytes;
                let model = reno_rate(&m) + startup / over.as_secs_f64().max(1e-9);
                PathCapacity {
                    goodput_bps: (c.goodput_bps * left).min(model),
                    rtt_s: c.rtt_s,
                }
            })
            .collect();
        rbuf_bound(&caps, self.built.config.rbuf as f64) * 8.0 / 1e6
    }

    /// The fraction of path `p`'s capacity that background traffic left it in this
    /// run, on its tightest forward link: each link's rate less what the background
    /// flows crossing it delivered over `over` (open-loop and TCP-like alike; what
    /// competitors actually took, so no fairness is assumed).
    fn background_share(&self, p: usize, over: Duration) -> f64 {
        let span = over.as_secs_f64();
        let rec = self.rec.borrow();
        let path_rate = self.routes[2 * p]
            .iter()
            .map(|&l| self.link_rate_bps(l, over))
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
                (self.link_rate_bps(l, over) - taken).max(0.0)
            })
            .fold(f64::INFINITY, f64::min);
        if path_rate.is_finite() && path_rate > 0.0 && span > 0.0 {
            (left / path_rate).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }

    /// The standard-sender model's inputs for path `p`: its loss as drawn for this run
    /// (Bernoulli and Gilbert in series), the least lossy path's for retransmissions,
    /// RTO from RTO.Min/Max and the path's jitter, the payload per packet and the
    /// receive buffer; whether CMT's CUC lets the window grow during recovery.
    fn reno_path(&self, p: usize, rtt_s: f64) -> RenoPath {
        let built = &self.built;
        let cfg = &built.config;
        let links = &built.paths[p].links;
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
            packet_loss: configured_loss(built, &self.drawn, links),
            episode_rate: forward_loss(built, &self.drawn, links, LossMeasure::Episodes),
            retransmission_loss: built
                .paths
                .iter()
                .map(|q| configured_loss(built, &self.drawn, &q.links))
                .fold(1.0, f64::min),
            rbuf_bytes: cfg.rbuf as f64,
            // CUC lets a path grow while its loss is repaired once the retransmission
            // can leave on another path (the favourable case, as a bound takes).
            grows_in_recovery: cfg.cuc && built.paths.len() > 1,
            initial_window: cfg.initial_cwnd() as f64 / cfg.cwnd_unit() as f64,
        }
    }
}
