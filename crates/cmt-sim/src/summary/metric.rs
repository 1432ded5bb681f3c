//! Metrics by name: what sweeps aggregate, result columns hold and reports plot.

use super::Summary;

/// Scalar metrics a sweep can aggregate, by the dotted name used in sweep files and
/// result columns. Per-path values are `paths.<path name>.<field>` with the fields of
/// [`PATH_METRICS`]; per-flow ones `flows.<name>.<field>` with those of
/// [`FLOW_METRICS`], for the association and each closed-loop background flow.
pub const METRICS: &[&str] = &[
    "goodput_mbps",
    "throughput_mbps",
    "bound_mbps",
    "goodput_of_bound",
    "cc_bound_mbps",
    "goodput_of_cc_bound",
    "delivered_bytes",
    "sim_time_s",
    "o3_tsn_peak",
    "reordering_latency_ms.mean",
    "reordering_latency_ms.p99",
    "reordering_latency_ms.max",
    "rbuf_blocked_s",
    "rbuf_max_bytes",
    "delay_ms.mean",
    "transit_ms.mean",
    "jitter_ms",
    "fast_retransmits",
    "timeouts",
    "ftt_s",
    "events",
    "rtx_decisions.total",
    "rtx_decisions.cwnd_ties",
    "rtx_decisions.not_largest_cwnd",
    "background.tcp_mbps",
    "background.udp_mbps",
    "sent_packets",
    "loss_rate",
    "cost",
    "energy_j",
    "energy_j_per_mb",
    "fairness.jain",
];

/// Per-flow metric fields (see [`METRICS`]): the `fairness` shares' values.
pub const FLOW_METRICS: &[&str] = &["goodput_mbps", "share", "vs_best_tcp", "vs_tcp_on_shared"];

/// Per-path metric fields (see [`METRICS`]).
pub const PATH_METRICS: &[&str] = &[
    "sent_packets",
    "sent_bytes",
    "lost_packets",
    "retransmissions",
    "retransmitted_bytes",
    "copies",
    "copy_bytes",
    "cost",
    "energy_j",
    "goodput_mbps",
    "throughput_mbps",
    "cwnd_reductions",
    "fast_retransmits",
    "timeouts",
    "failures",
    "recoveries",
];

impl Summary {
    /// Delivered rate of the TCP-like background flows (`tcp`) or of the open-loop ones,
    /// Mbit/s in total.
    fn background_mbps(&self, tcp: bool) -> f64 {
        self.background
            .iter()
            .filter(|f| f.tcp == tcp)
            .map(|f| f.delivered_mbps)
            .sum()
    }

    /// The value of a metric named as in [`METRICS`] / [`PATH_METRICS`]. `None` for an
    /// unknown name, an unknown path, or a metric without a value in this run (`ftt_s`
    /// of a timed run).
    pub fn metric(&self, name: &str) -> Option<f64> {
        if let Some(rest) = name.strip_prefix("paths.") {
            let (path, field) = rest.rsplit_once('.')?;
            let p = self.paths.iter().find(|p| p.name == path)?;
            return Some(match field {
                "sent_packets" => p.sent_packets as f64,
                "sent_bytes" => p.sent_bytes as f64,
                "lost_packets" => p.lost_packets as f64,
                "retransmissions" => p.retransmissions as f64,
                "retransmitted_bytes" => p.retransmitted_bytes as f64,
                "copies" => p.copies as f64,
                "copy_bytes" => p.copy_bytes as f64,
                "cost" => p.cost?,
                "energy_j" => p.energy_j?,
                "goodput_mbps" => p.goodput_mbps,
                "throughput_mbps" => p.throughput_mbps,
                "cwnd_reductions" => p.cwnd_reductions as f64,
                "fast_retransmits" => p.fast_retransmits as f64,
                "timeouts" => p.timeouts as f64,
                "failures" => p.failures as f64,
                "recoveries" => p.recoveries as f64,
                _ => return None,
            });
        }
        if let Some(rest) = name.strip_prefix("flows.") {
            let (flow, field) = rest.rsplit_once('.')?;
            let f = self
                .fairness
                .as_ref()?
                .shares
                .iter()
                .find(|f| f.name == flow)?;
            return match field {
                "goodput_mbps" => Some(f.goodput_mbps),
                "share" => Some(f.share),
                "vs_best_tcp" => f.vs_best_tcp,
                "vs_tcp_on_shared" => f.vs_tcp_on_shared,
                _ => None,
            };
        }
        Some(match name {
            "goodput_mbps" => self.goodput_mbps,
            "throughput_mbps" => self.throughput_mbps,
            "bound_mbps" => self.bound_mbps,
            "goodput_of_bound" => self.goodput_of_bound,
            "cc_bound_mbps" => self.cc_bound_mbps,
            "goodput_of_cc_bound" => self.goodput_of_cc_bound,
            "delivered_bytes" => self.delivered_bytes as f64,
            "sim_time_s" => self.sim_time_s,
            "o3_tsn_peak" => self.o3_tsn_peak as f64,
            "reordering_latency_ms.mean" => self.reordering_latency_ms.mean,
            "reordering_latency_ms.p99" => self.reordering_latency_ms.p99,
            "reordering_latency_ms.max" => self.reordering_latency_ms.max,
            "rbuf_blocked_s" => self.rbuf_blocked_s,
            "rbuf_max_bytes" => self.rbuf_max_bytes as f64,
            "delay_ms.mean" => self.delay_ms.mean,
            "transit_ms.mean" => self.transit_ms.mean,
            "jitter_ms" => self.jitter_ms,
            "fast_retransmits" => self.fast_retransmits as f64,
            "timeouts" => self.timeouts as f64,
            "ftt_s" => self.ftt_s?,
            "cost" => self.cost?,
            "energy_j" => self.energy_j?,
            "energy_j_per_mb" => self.energy_j_per_mb?,
            "fairness.jain" => self.fairness.as_ref()?.jain,
            "events" => self.events as f64,
            "rtx_decisions.total" => self.rtx_decisions.total as f64,
            "rtx_decisions.cwnd_ties" => self.rtx_decisions.cwnd_ties as f64,
            "rtx_decisions.not_largest_cwnd" => self.rtx_decisions.not_largest_cwnd as f64,
            "background.tcp_mbps" => self.background_mbps(true),
            "background.udp_mbps" => self.background_mbps(false),
            "sent_packets" => self.paths.iter().map(|p| p.sent_packets).sum::<u64>() as f64,
            "loss_rate" => {
                let sent: u64 = self.paths.iter().map(|p| p.sent_packets).sum();
                let lost: u64 = self.paths.iter().map(|p| p.lost_packets).sum();
                if sent == 0 {
                    return None;
                }
                lost as f64 / sent as f64
            }
            _ => return None,
        })
    }
}
