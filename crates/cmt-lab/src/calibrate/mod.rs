//! Calibration (`cmtlab calibrate`): a scenario of real paths fitted to the per-packet
//! traces of a transfer over them — each path's capacity (a rate, and a Mahimahi
//! capacity trace of its busy periods), one-way delay, queue and random loss
//! (Bernoulli or Gilbert–Elliott), with the fit's uncertainty — for the simulator to
//! predict what the real paths will do. The loop of Pantheon's calibrated emulators
//! (Yan et al., "Pantheon: the training ground for Internet congestion-control
//! research", USENIX ATC 2018), for several paths at once. Method and limits:
//! docs/calibrate.md.

mod fit;
mod matched;
mod observed;

use std::fmt::Write as _;
use std::path::Path;

use cmt_sim::trace::OPPORTUNITY_BYTES;

pub use fit::{fit_path, wilson, Gilbert, PathFit, Sends};
pub use observed::{read, Observed, PathObs, Pkt};

/// What the runtime does that a scenario must say (the simulator's defaults differ).
#[derive(Clone, Debug)]
pub struct Setup {
    /// Bytes below SCTP per packet (IPv4 + UDP: 28).
    pub ip_header: u64,
    /// Path MTU, IP header included.
    pub mtu: u64,
    /// The receiver's buffer, bytes.
    pub rbuf: u64,
    /// The scheduler the scenario names, if any (else the simulator's default, and a
    /// preset set later chooses its own).
    pub scheduler: Option<String>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            ip_header: 28,
            mtu: 1500,
            rbuf: 4 << 20,
            scheduler: None,
        }
    }
}

/// The fitted paths.
#[derive(Clone, Debug)]
pub struct Calibration {
    /// Per path of the sender, those that carried data.
    pub paths: Vec<PathFit>,
    /// The setup the scenario is written for.
    pub setup: Setup,
}

/// Fits the paths of the transfer traced in `files`.
pub fn calibrate(files: &[&Path], setup: Setup) -> Result<Calibration, String> {
    let obs = read(files, setup.mtu.saturating_sub(setup.ip_header))?;
    let mut sends = fit::Sends::new();
    for s in obs.paths.iter().flat_map(|p| &p.sent) {
        *sends.entry(s.tsn).or_default() += 1;
    }
    let mut paths: Vec<PathFit> = obs
        .paths
        .iter()
        .filter(|p| !p.sent.is_empty())
        .map(|p| fit_path(p, setup.ip_header, &sends))
        .collect();
    // The two clocks' offset is one for all paths, and a round trip can only be
    // measured too long (a SACK that waited), so each path's gives a lower bound of the
    // offset: the largest of them, taken from each path's smallest one-way delay, gives
    // every path its delay — a path whose own round trips were all delayed too.
    let offset = paths
        .iter()
        .filter_map(|p| p.delay_rtt_s.map(|d| p.owd_floor_s - d))
        .max_by(f64::total_cmp);
    if let Some(offset) = offset {
        for p in &mut paths {
            p.delay_s = (p.owd_floor_s - offset).max(0.0);
        }
    }
    if let Some(p) = paths.iter().find(|p| p.arrived == 0) {
        return Err(format!(
            "path `{}`: {} packets sent, none in the receiver's trace (is it this transfer's?)",
            p.name, p.sent
        ));
    }
    Ok(Calibration { paths, setup })
}

/// Mahimahi delivery opportunities (ms, one per [`OPPORTUNITY_BYTES`]) of a path: where it was busy,
/// when its bytes left the bottleneck; elsewhere at the fitted rate. Starts at the first
/// arrival; at least one line.
pub fn mahimahi(p: &PathFit) -> String {
    let rate = p.rate_bps.unwrap_or(0.0) / 8.0;
    let t0 = p.span.0;
    // (time, cumulative bytes) corners of the delivery curve.
    let mut corners = vec![(t0, 0.0)];
    let mut bytes = 0.0;
    let mut now = t0;
    for &(s, e, b) in &p.busy {
        if s > now {
            bytes += (s - now) * rate;
        }
        corners.push((s.max(now), bytes));
        bytes += b;
        now = e.max(now);
        corners.push((now, bytes));
    }
    if p.span.1 > now {
        bytes += (p.span.1 - now) * rate;
        corners.push((p.span.1, bytes));
    }
    let unit = f64::from(OPPORTUNITY_BYTES);
    let mut out = String::new();
    let mut k = 1.0;
    for w in corners.windows(2) {
        let ((ta, ba), (tb, bb)) = (w[0], w[1]);
        while k * unit <= bb && bb > ba {
            let t = ta + (tb - ta) * (k * unit - ba) / (bb - ba);
            let _ = writeln!(out, "{}", (((t - t0) * 1000.0).floor() as u64).max(1));
            k += 1.0;
        }
    }
    if out.is_empty() {
        out.push_str("1\n");
    }
    out
}

/// `x` seconds as milliseconds for a scenario.
fn ms(x: f64) -> String {
    format!("{:.3}ms", x * 1000.0)
}

impl Calibration {
    /// The report: per path the fitted values and their uncertainty.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, p) in self.paths.iter().enumerate() {
            let rate = match (p.rate_bps, p.rate_ci_bps) {
                (Some(r), Some(ci)) => format!("{:.3} ± {:.3} Mbit/s", r / 1e6, ci / 1e6),
                (Some(r), None) => format!("{:.3} Mbit/s (one second of samples)", r / 1e6),
                (None, _) => "unknown (no packet queued)".into(),
            };
            let (share, lo, hi) = p.loss;
            let model = match p.gilbert {
                Some(g) => format!(
                    ", in runs of {:.1}: Gilbert p {:.5} r {:.3}",
                    p.loss_run, g.p, g.r
                ),
                None => String::new(),
            };
            out.push(format!(
                "path {i} ({}): capacity {rate} over {:.2} s busy; RTT min {}; one-way delay {} \
                 (jitter {}); queue {} packets{}; random loss {:.3} % [{:.3}, {:.3}] ({} of \
                 {}){model}; queue drops {}",
                p.name,
                p.busy_s,
                p.rtt_min_s.map_or("–".into(), ms),
                ms(p.delay_s),
                ms(p.jitter_s),
                p.queue,
                if p.queue_overflowed() {
                    ""
                } else {
                    " (never seen full: twice the most it held)"
                },
                100.0 * share,
                100.0 * lo,
                100.0 * hi,
                p.random_losses,
                p.exposed,
                p.queue_drops
            ));
        }
        out
    }

    /// A scenario of the paths, for the runtime's setup; `traces`: per path the file
    /// name of its Mahimahi trace, to use in place of the rate (empty: none).
    pub fn scenario(&self, traces: Option<&[String]>) -> String {
        let s = &self.setup;
        let mut t = String::from("# Fitted by `cmtlab calibrate` (docs/calibrate.md)\n");
        for l in self.lines() {
            let _ = writeln!(t, "# {l}");
        }
        t += "name = \"calibrated\"\nseed = 1\nduration = \"10s\"\n\n[association]\n";
        if let Some(name) = &s.scheduler {
            let _ = writeln!(t, "scheduler = \"{name}\"");
        }
        let _ = write!(
            t,
            "# the real runtime's: IPv4 + UDP below SCTP, RTO.Min 0.2 s, CMT-PF with one \
             timeout of grace, paths confirmed first\nip_header = {}\nmtu = {}\n\
             rto_min = \"200ms\"\npf = true\npfmr = 1\nconfirm_paths = true\n\n[receiver]\n\
             rbuf = {}\n",
            s.ip_header, s.mtu, s.rbuf
        );
        for (i, p) in self.paths.iter().enumerate() {
            let _ = write!(t, "\n[[links]]\nname = \"path{i}\"\n");
            if p.rate_bps.is_none() {
                t += "# capacity unknown (no packet queued behind another): 1 Mbit/s stands in\n";
            }
            let rate = p.rate_bps.unwrap_or(1e6);
            let _ = writeln!(t, "rate = \"{:.0}bps\"", rate);
            if let Some(f) = traces.and_then(|v| v.get(i)).filter(|f| !f.is_empty()) {
                let _ = writeln!(t, "trace = \"{f}\"");
            }
            let _ = writeln!(
                t,
                "delay = \"{}\"\nqueue = {}\nloss_direction = \"forward\"",
                ms(p.delay_s),
                p.queue
            );
            if p.jitter_s >= 1e-5 {
                let _ = writeln!(
                    t,
                    "jitter = \"{}\"\njitter_model = \"half-normal\"",
                    ms(p.jitter_s)
                );
            }
            match p.gilbert {
                Some(g) => {
                    let _ = writeln!(t, "gilbert = {{ p = {:.6}, r = {:.6} }}", g.p, g.r);
                }
                None => {
                    let _ = writeln!(t, "loss = {:.6}", p.loss.0);
                }
            }
        }
        for i in 0..self.paths.len() {
            let _ = write!(
                t,
                "\n[[paths]]\nname = \"path{i}\"\nlinks = [\"path{i}\"]\n"
            );
        }
        t
    }
}
