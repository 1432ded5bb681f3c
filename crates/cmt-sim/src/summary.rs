//! The result of one run: `summary.json` and the time-series CSVs.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::scenario::Workload;
use crate::world::{Drawn, Ending, Simulation};

/// Latency statistics (reordering latency, flow completion times), ms.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// 99th percentile (nearest rank).
    pub p99: f64,
    /// Maximum.
    pub max: f64,
}

/// One-way delay statistics, ms.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Delay {
    /// Mean one-way delay of DATA packets.
    pub mean: f64,
}

/// Per-path results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct PathSummary {
    /// Path name.
    pub name: String,
    /// DATA packets sent (including retransmissions).
    pub sent_packets: u64,
    /// User bytes sent on this path: first transmissions, retransmissions and copies
    /// (what a metered path is paid for, headers aside).
    #[serde(default)]
    pub sent_bytes: u64,
    /// A backup path (`paths[].backup`): data only while no regular path is active.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub backup: bool,
    /// DATA packets dropped by the network.
    pub lost_packets: u64,
    /// DATA packets retransmitted on this path.
    pub retransmissions: u64,
    /// User bytes of those retransmissions (part of `sent_bytes`).
    #[serde(default)]
    pub retransmitted_bytes: u64,
    /// Copies of chunks first sent on another path (redundant, JAPS).
    pub copies: u64,
    /// User bytes of those copies (part of `sent_bytes`): the redundancy's cost.
    #[serde(default)]
    pub copy_bytes: u64,
    /// `sent_bytes` at the path's `price_per_mb` (absent for an unpriced path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The device's radio on this path (`lte`, `wifi`; absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub radio: Option<String>,
    /// That radio's energy over the run, J (docs/metrics.md "Cost and energy").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// Goodput of data that arrived on this path, Mbit/s.
    pub goodput_mbps: f64,
    /// Payload arriving on this path, duplicates included, Mbit/s.
    pub throughput_mbps: f64,
    /// Times the path's cwnd was reduced (fast-retransmit cuts, timeouts, idle decay).
    pub cwnd_reductions: u64,
    /// Chunks lost on this path that were marked for fast retransmission.
    pub fast_retransmits: u64,
    /// T3-rtx expiries of this path.
    pub timeouts: u64,
    /// Times the sender marked the path potentially failed or inactive.
    pub failures: u64,
    /// Times the path became active again.
    pub recoveries: u64,
    /// With ECN on: window cuts for ECN Echoes (Congestion Experienced marks, no loss).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_cuts: Option<u64>,
}

/// One background flow's results.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct FlowSummary {
    /// Flow name.
    pub name: String,
    /// Target mean rate (drawn for this run when a load range was given), Mbit/s; 0 for
    /// TCP flows, which take what congestion control gives them.
    pub target_mbps: f64,
    /// Offered rate over its active time, Mbit/s.
    pub offered_mbps: f64,
    /// Rate that reached the sink, Mbit/s.
    pub delivered_mbps: f64,
    /// Packets dropped by the network.
    pub lost_packets: u64,
    /// A closed-loop flow, TCP-like or multipath (else an open-loop source: CBR,
    /// Poisson, Pareto, VBR).
    #[serde(default)]
    pub tcp: bool,
    /// A multipath flow: the rate it sent on each path over its active time, Mbit/s.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path_mbps: Vec<f64>,
    /// A web or video flow: objects (segments) completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<u64>,
    /// A web or video flow: its objects' (segments') flow completion times (handed
    /// to the sender → wholly delivered), ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fct_ms: Option<Latency>,
    /// A video flow: what its player saw.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub video: Option<VideoSummary>,
    /// A closed-loop flow with ECN on: window cuts for ECN Echoes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_cuts: Option<u64>,
}

/// A video flow's player: the quality it fetched and how often playback stalled.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct VideoSummary {
    /// Mean encoding rate of the segments fetched, Mbit/s.
    pub mean_rate_mbps: f64,
    /// Encoding rate changes between consecutive segments.
    pub switches: u64,
    /// Time playback stood still with an empty buffer, s (until the last segment).
    pub rebuffer_s: f64,
}

/// The CMT sender's retransmission-destination decisions among two or more candidate
/// paths, against RTX-CWND's rule (the largest cwnd).
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct RtxDecisions {
    /// Decisions.
    pub total: u64,
    /// Two or more candidates shared the largest cwnd.
    pub cwnd_ties: u64,
    /// The path chosen did not have the largest cwnd.
    pub not_largest_cwnd: u64,
}

/// Everything `summary.json` holds. Field meanings: docs/metrics.md.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Summary {
    /// Scenario name.
    pub scenario: String,
    /// Seed.
    pub seed: u64,
    /// Scheduler name.
    pub scheduler: String,
    /// Retransmission policy name.
    pub rtx: String,
    /// Congestion control name.
    pub cc: String,
    /// Receive buffer, bytes.
    pub rbuf: u32,
    /// How the run ended.
    pub ending: String,
    /// Simulated time measured, s.
    pub sim_time_s: f64,
    /// User bytes delivered in order.
    pub delivered_bytes: u64,
    /// Goodput, Mbit/s.
    pub goodput_mbps: f64,
    /// Throughput at the receiver (payload incl. duplicates), Mbit/s.
    pub throughput_mbps: f64,
    /// Receive-buffer bound, Mbit/s.
    pub bound_mbps: f64,
    /// goodput / bound.
    pub goodput_of_bound: f64,
    /// Congestion-control-aware bound, Mbit/s (docs/metrics.md).
    #[serde(default)]
    pub cc_bound_mbps: f64,
    /// goodput / congestion-control-aware bound.
    #[serde(default)]
    pub goodput_of_cc_bound: f64,
    /// Peak |O3-TSN|.
    pub o3_tsn_peak: u64,
    /// Reordering latency.
    pub reordering_latency_ms: Latency,
    /// Time the sender was receive-buffer blocked, s.
    pub rbuf_blocked_s: f64,
    /// Largest receive-buffer occupancy, bytes.
    pub rbuf_max_bytes: u32,
    /// One-way delay.
    pub delay_ms: Delay,
    /// Chunk transit: first transmission → in-order delivery (the JAPS paper's
    /// "transmission time").
    pub transit_ms: Delay,
    /// Mean |Δ delay|, ms.
    pub jitter_ms: f64,
    /// Fast retransmit events.
    pub fast_retransmits: u64,
    /// T3-rtx timeouts.
    pub timeouts: u64,
    /// Price of the priced paths' traffic (absent when no path has a price).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Energy of the device's radios, J (absent when no path has a radio).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j: Option<f64>,
    /// That energy per 10⁶ user bytes delivered, J.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_j_per_mb: Option<f64>,
    /// File transfer time, s (null for timed runs or unfinished transfers).
    pub ftt_s: Option<f64>,
    /// Simulator events processed.
    pub events: u64,
    /// Wall-clock time of the run, s (the only non-deterministic field).
    pub wall_s: f64,
    /// Values drawn for this run (delays, loss rates).
    pub drawn: Vec<Drawn>,
    /// Per path.
    pub paths: Vec<PathSummary>,
    /// Per background flow.
    #[serde(default)]
    pub background: Vec<FlowSummary>,
    /// How the association and the closed-loop flows shared the network (absent
    /// without closed-loop background flows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fairness: Option<Fairness>,
    /// Retransmission-destination decisions against RTX-CWND's rule.
    #[serde(default)]
    pub rtx_decisions: RtxDecisions,
    /// The build that produced this result (version, git commit, source hash).
    #[serde(default)]
    pub build: crate::Build,
    /// Fingerprint of the run's inputs: scenario text, overrides, trace contents.
    #[serde(default)]
    pub inputs: String,
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    if secs <= 0.0 {
        0.0
    } else {
        bytes as f64 * 8.0 / secs / 1e6
    }
}

/// Mean, 99th percentile (nearest rank) and maximum of latencies in ns, as ms: `zeros`
/// latencies of 0 and the others in `ns`. The percentile is selected, not sorted for
/// (linear time); the mean adds exactly in integers.
fn latency_stats(zeros: u64, mut ns: Vec<u64>) -> Latency {
    let n = zeros as usize + ns.len();
    if n == 0 {
        return Latency {
            mean: 0.0,
            p99: 0.0,
            max: 0.0,
        };
    }
    let sum: u128 = ns.iter().map(|&x| x as u128).sum();
    let max = ns.iter().copied().max().unwrap_or(0);
    let rank = ((n as f64 * 0.99).ceil() as usize).clamp(1, n);
    let p99 = match rank.checked_sub(zeros as usize + 1) {
        None => 0, // within the zeros
        Some(i) => *ns.select_nth_unstable(i).1,
    };
    Latency {
        mean: sum as f64 / n as f64 * 1e-6,
        p99: p99 as f64 * 1e-6,
        max: max as f64 * 1e-6,
    }
}

impl Summary {
    /// Summarises a finished simulation.
    pub fn of(sim: &Simulation, wall_s: f64) -> Summary {
        let mut s = Self::counted(sim, wall_s);
        let sum = |f: fn(&PathSummary) -> Option<f64>| {
            let v: Vec<f64> = s.paths.iter().filter_map(f).collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>())
        };
        s.cost = sum(|p| p.cost);
        s.fairness = fairness::of(&sim.built, &s);
        s.energy_j = sum(|p| p.energy_j);
        s.energy_j_per_mb = s
            .energy_j
            .filter(|_| s.delivered_bytes > 0)
            .map(|e| e / (s.delivered_bytes as f64 / 1e6));
        s
    }

    /// The summary's fields from the recorder's counters.
    fn counted(sim: &Simulation, wall_s: f64) -> Summary {
        let r = sim.rec.borrow();
        let b = &sim.built;
        let t = sim.now().as_secs_f64();
        let t_end = t;
        let ftt = match (b.workload.clone(), sim.ending) {
            (Workload::File { .. }, Some(Ending::FileDelivered)) => {
                r.last_delivery.map(|t| t.as_secs_f64())
            }
            _ => None,
        };
        let measured = ftt.unwrap_or(t);
        let lat = latency_stats(r.reordering_none, r.reordering.clone());
        let bound = sim.bound_mbps(cmt_core::Duration::from_secs_f64(measured));
        let cc_bound = sim.cc_bound_mbps(cmt_core::Duration::from_secs_f64(measured));
        let goodput = mbps(r.delivered, measured);
        Summary {
            scenario: b.name.clone(),
            seed: b.seed,
            scheduler: b.scheduler.name().into(),
            rtx: b.rtx.name().into(),
            cc: b.cc.name().into(),
            rbuf: b.config.rbuf,
            ending: format!("{:?}", sim.ending.unwrap_or(Ending::DurationElapsed)),
            sim_time_s: measured,
            delivered_bytes: r.delivered,
            goodput_mbps: goodput,
            throughput_mbps: mbps(r.received, measured),
            bound_mbps: bound,
            goodput_of_bound: if bound > 0.0 { goodput / bound } else { 0.0 },
            cc_bound_mbps: cc_bound,
            goodput_of_cc_bound: if cc_bound > 0.0 {
                goodput / cc_bound
            } else {
                0.0
            },
            o3_tsn_peak: r.o3_peak,
            reordering_latency_ms: lat,
            rbuf_blocked_s: r.blocked_total.as_secs_f64(),
            rbuf_max_bytes: r.rbuf_max,
            delay_ms: Delay {
                mean: r.delay_mean_ms(),
            },
            transit_ms: Delay {
                mean: r.transit_mean_ms(),
            },
            jitter_ms: r.jitter_ms(),
            fast_retransmits: r.fast_retransmits,
            timeouts: r.timeouts,
            cost: None,
            energy_j: None,
            energy_j_per_mb: None,
            ftt_s: ftt,
            events: sim.events,
            wall_s,
            drawn: sim.drawn.clone(),
            paths: b
                .paths
                .iter()
                .zip(&r.paths)
                .enumerate()
                .map(|(i, (p, c))| PathSummary {
                    name: p.name.clone(),
                    sent_packets: c.sent_packets,
                    sent_bytes: c.sent_bytes,
                    backup: p.backup,
                    lost_packets: c.lost_packets,
                    retransmissions: c.retransmissions,
                    retransmitted_bytes: c.retransmitted_bytes,
                    copies: c.copies,
                    copy_bytes: c.copy_bytes,
                    cost: p.price_per_mb.map(|x| x * c.sent_bytes as f64 / 1e6),
                    radio: p.radio.as_ref().map(|m| m.kind.clone()),
                    energy_j: r.radios.as_ref().and_then(|rs| {
                        rs.meters[i].as_ref().map(crate::energy::RadioMeter::joules)
                    }),
                    goodput_mbps: mbps(c.delivered_bytes, measured),
                    throughput_mbps: mbps(c.received_bytes, measured),
                    cwnd_reductions: c.cwnd_reductions,
                    fast_retransmits: c.fast_retransmits,
                    timeouts: c.timeouts,
                    failures: c.failures,
                    recoveries: c.recoveries,
                    ecn_cuts: b.config.ecn.then_some(c.ecn_cuts),
                })
                .collect(),
            background: background(sim, &r.flows, t_end),
            fairness: None,
            build: crate::build(),
            inputs: b.inputs.clone(),
            rtx_decisions: {
                let st = sim.sender_stats();
                RtxDecisions {
                    total: st.rtx_decisions,
                    cwnd_ties: st.rtx_cwnd_ties,
                    not_largest_cwnd: st.rtx_not_largest_cwnd,
                }
            },
        }
    }
}

/// Each background flow's results over its active time (its start to its stop or
/// `t_end`).
fn background(
    sim: &Simulation,
    flows: &[crate::recorder::FlowCounters],
    t_end: f64,
) -> Vec<FlowSummary> {
    sim.built
        .traffic
        .iter()
        .zip(flows)
        .zip(&sim.sources)
        .enumerate()
        .map(|(i, ((t, c), src))| {
            let end = t.stop.map_or(t_end, |s| s.as_secs_f64().min(t_end));
            let active = (end - t.start.as_secs_f64()).max(0.0);
            let path = |p: usize| c.path_sent_bytes.get(p).copied().unwrap_or(0);
            let video = sim.apps[i].as_ref().and_then(|a| match a.model {
                crate::app::App::Video(_) => Some(VideoSummary {
                    mean_rate_mbps: a.player.rate_sum / (c.fct_ns.len().max(1) as f64) / 1e6,
                    switches: a.player.switches,
                    rebuffer_s: a.player.stalled_s,
                }),
                crate::app::App::Web(_) => None,
            });
            FlowSummary {
                name: t.name.clone(),
                target_mbps: src.as_ref().map_or(0.0, |(s, _)| s.rate_bps / 1e6),
                offered_mbps: mbps(c.sent_bytes, active),
                delivered_mbps: mbps(c.delivered_bytes, active),
                lost_packets: c.lost_packets,
                tcp: t.tcp,
                path_mbps: match t.paths.len() {
                    0 | 1 => Vec::new(),
                    n => (0..n).map(|p| mbps(path(p), active)).collect(),
                },
                objects: t.app.as_ref().map(|_| c.fct_ns.len() as u64),
                fct_ms: t.app.as_ref().map(|_| latency_stats(0, c.fct_ns.clone())),
                video,
                ecn_cuts: t.ecn.then_some(c.ecn_cuts),
            }
        })
        .collect()
}

/// Writes `summary.json`, `timeseries.csv` (one row per bin) and `paths.csv` (one row
/// per bin and path) into `dir`. Column meanings: docs/metrics.md.
pub fn write_outputs(sim: &Simulation, summary: &Summary, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let json = serde_json::to_string_pretty(summary).map_err(std::io::Error::other)?;
    write_atomic(&dir.join("summary.json"), json.as_bytes())?;
    let r = sim.rec.borrow();
    let w = sim.built.bin.as_secs_f64();
    let mut ts = Vec::new();
    writeln!(
        ts,
        "t_s,goodput_mbps,throughput_mbps,o3_tsn_max,rbuf_max_bytes,rbuf_blocked_s,tsn_sent,tsn_received"
    )?;
    let mut ps = Vec::new();
    writeln!(ps, "t_s,path,goodput_mbps,throughput_mbps,cwnd_bytes")?;
    for (i, bin) in r.bins.iter().enumerate() {
        let t = (i + 1) as f64 * w;
        writeln!(
            ts,
            "{t:.3},{:.6},{:.6},{},{},{:.6},{},{}",
            mbps(bin.delivered_bytes, w),
            mbps(bin.received_bytes, w),
            bin.o3_max,
            bin.rbuf_max,
            bin.blocked.as_secs_f64(),
            bin.tsn_sent,
            bin.tsn_received
        )?;
        for (p, path) in sim.built.paths.iter().enumerate() {
            let (g, r) = (bin.delivered_per_path[p], bin.received_per_path[p]);
            writeln!(
                ps,
                "{t:.3},{},{:.6},{:.6},{}",
                path.name,
                mbps(g, w),
                mbps(r, w),
                bin.cwnd[p]
            )?;
        }
    }
    write_atomic(&dir.join("timeseries.csv"), &ts)?;
    write_atomic(&dir.join("paths.csv"), &ps)
}

/// Writes to a temporary file and renames it, so a reader never sees half a file and a
/// failed run never clobbers a good result.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

mod fairness;
mod metric;

pub use fairness::{names as fairness_names, Fairness, Share};
pub use metric::{FLOW_METRICS, METRICS, PATH_METRICS};

#[cfg(test)]
mod tests {
    use super::*;

    /// The statistics by definition: sort, take the nearest-rank 99th percentile and
    /// the last value, add in ascending order.
    fn by_sorting(mut ns: Vec<u64>) -> (f64, f64, f64) {
        ns.sort_unstable();
        let n = ns.len();
        let p99 = ns[((n as f64 * 0.99).ceil() as usize).clamp(1, n) - 1];
        let mean = ns.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        (mean * 1e-6, p99 as f64 * 1e-6, ns[n - 1] as f64 * 1e-6)
    }

    /// Counting the zeros and selecting the percentile gives bit for bit what sorting
    /// every sample gave, on lists of every length from 1 to 300 with no zeros, some and
    /// nearly all (the summary must not change).
    #[test]
    fn selected_percentile_and_exact_mean_equal_the_sorted_definition() {
        let mut x: u64 = 7;
        for zero_share in [0, 50, 99, 100] {
            for n in 1..=300 {
                let all: Vec<u64> = (0..n)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        if (x >> 20) % 100 < zero_share {
                            0
                        } else {
                            1 + (x >> 33) % 5_000_000_000
                        }
                    })
                    .collect();
                let zeros = all.iter().filter(|&&v| v == 0).count() as u64;
                let others = all.iter().copied().filter(|&v| v > 0).collect();
                let l = latency_stats(zeros, others);
                let (mean, p99, max) = by_sorting(all);
                assert_eq!(
                    (l.mean.to_bits(), l.p99.to_bits(), l.max.to_bits()),
                    (mean.to_bits(), p99.to_bits(), max.to_bits()),
                    "n = {n}, {zeros} zeros"
                );
            }
        }
        let empty = latency_stats(0, Vec::new());
        assert_eq!((empty.mean, empty.p99, empty.max), (0.0, 0.0, 0.0));
    }
}
