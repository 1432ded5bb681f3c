//! Sender-side path choice under receiver-driven CMT: CMT-Rev's PAM-rev + DDS-rev
//! (Cao et al. 2015, CMT-Rev §3.2, eq. 5–6, Algorithm 1; docs/algorithms.md §2.5–2.6) and MPTCP-rec's PCDer (MPTCP-rec
//! 2016 §4.2, eq. 5–9, Algorithm 1; docs/algorithms.md §3.2). The sender computes no path quality: it
//! sorts paths by the rate the receiver advertised.
//!
//! * **DDS-rev** (both): the new chunk goes to the first path, in descending advertised
//!   rate, of the candidate list whose allowance (the `receiver` controller's window)
//!   and pacing let it send; if none can, nothing is sent.
//! * **Blocking prediction** (both), once per round — a new advert, or, when adverts
//!   stop arriving, the largest SRTT of the active paths since the last evaluation (so a
//!   run of lost adverts cannot freeze the subset): with the last
//!   m = 8 advertised windows, `Δawnd = (awnd − avg)/(max − min)` (0 when max = min);
//!   receive-buffer blocking is predicted when `Δawnd < 0` and it fell since the last
//!   round (eq. 5–7). That is PCDer's test. PAM-rev removes a path "when blocking is
//!   detected" (decision D7): only when the round ends with the sender actually
//!   receive-window blocked (the peer window below one chunk), never on the prediction
//!   alone, so paths with room in the buffer all stay in use.
//! * **Partial CMT**: when blocking is predicted, the candidate path with the lowest
//!   advertised rate is removed (never the last; at most one per round). A removed path
//!   whose rate exceeds the lowest rate in the list is put back (not in the round it was
//!   removed). Without a prediction PCDer returns to all paths at once; PAM-rev after
//!   M = 3 quiet rounds (decision D7).
//! * **Keep-alive probe** (decision D7: the papers do not say how a removed
//!   path's rate can recover when it carries nothing): a removed path may carry one
//!   chunk per round, so the receiver keeps measuring it.
//!
//! Before the first advert every ACTIVE path is a candidate, fastest SRTT first.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::time::{Duration, Time};
use crate::view::{PathId, PathState, PathView};

/// The re-evaluation period before any SRTT is known.
const DEFAULT_ROUND: Duration = Duration::from_millis(200);

/// PAM-rev (CMT-Rev) or PCDer (MPTCP-rec).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavour {
    /// CMT-Rev: PAM-rev + DDS-rev.
    CmtRev,
    /// MPTCP-rec: PCDer with DDS-rev ordering.
    MptcpRec,
}

/// Factory for [`ReceiverDriven`]; parameters `window` (m, default 8), `quiet_rounds`
/// (M, default 3; PAM-rev only) and `probe` (keep-alive chunks, default true).
#[derive(Clone, Debug)]
pub struct ReceiverDrivenFactory {
    flavour: Flavour,
    window: usize,
    quiet_rounds: u32,
    probe: bool,
}

impl ReceiverDrivenFactory {
    /// Reads and validates parameters.
    pub fn from_params(flavour: Flavour, params: &Params) -> Result<Self, ParamError> {
        let name = match flavour {
            Flavour::CmtRev => "cmt-rev",
            Flavour::MptcpRec => "mptcp-rec",
        };
        params.expect_only(name, &["window", "quiet_rounds", "probe"])?;
        let window = params.number("window", 8.0)?;
        if !(2.0..=1024.0).contains(&window) {
            return Err(ParamError(format!(
                "parameter `window` must be in 2..=1024, got {window}"
            )));
        }
        let quiet = params.number("quiet_rounds", 3.0)?;
        if !(1.0..=1000.0).contains(&quiet) {
            return Err(ParamError(format!(
                "parameter `quiet_rounds` must be in 1..=1000, got {quiet}"
            )));
        }
        Ok(ReceiverDrivenFactory {
            flavour,
            window: window as usize,
            quiet_rounds: quiet as u32,
            probe: params.flag("probe", true)?,
        })
    }
}

impl SchedulerFactory for ReceiverDrivenFactory {
    fn name(&self) -> &'static str {
        match self.flavour {
            Flavour::CmtRev => "cmt-rev",
            Flavour::MptcpRec => "mptcp-rec",
        }
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(ReceiverDriven::new(self.clone(), num_paths))
    }
}

/// State of the path subset.
#[derive(Clone, Debug)]
pub struct ReceiverDriven {
    cfg: ReceiverDrivenFactory,
    /// Paths removed from the candidate list.
    unused: Vec<bool>,
    /// Removed paths that may still carry their keep-alive chunk this round.
    probe_due: Vec<bool>,
    awnd: Vec<u64>,
    prev_delta: Option<f64>,
    round: u64,
    /// When the subset was last evaluated.
    evaluated: Option<Time>,
    quiet: u32,
    /// Removals so far (for tests and reports).
    pub removals: u64,
}

/// `Δawnd` of eq. 5 over the observations, newest last (0 when max = min).
pub fn awnd_delta(awnd: &[u64]) -> f64 {
    let Some(&cur) = awnd.last() else { return 0.0 };
    let max = *awnd.iter().max().expect("non-empty") as f64;
    let min = *awnd.iter().min().expect("non-empty") as f64;
    if max <= min {
        return 0.0;
    }
    let avg = awnd.iter().sum::<u64>() as f64 / awnd.len() as f64;
    (cur as f64 - avg) / (max - min)
}

fn rate(p: &PathView) -> f64 {
    p.advertised_rate.unwrap_or(0.0)
}

impl ReceiverDriven {
    /// A scheduler for `num_paths` paths, all in the candidate list.
    pub fn new(cfg: ReceiverDrivenFactory, num_paths: usize) -> Self {
        ReceiverDriven {
            cfg,
            unused: vec![false; num_paths],
            probe_due: vec![false; num_paths],
            awnd: Vec::new(),
            prev_delta: None,
            round: 0,
            evaluated: None,
            quiet: 0,
            removals: 0,
        }
    }

    /// Paths in the candidate list now.
    pub fn candidates(&self) -> Vec<bool> {
        self.unused.iter().map(|u| !u).collect()
    }

    /// A new round: a new advert, or one round trip of the slowest active path since
    /// the last evaluation.
    fn round_due(&self, ctx: &SchedContext<'_>) -> bool {
        if ctx.adverts != self.round {
            return true;
        }
        let period = ctx
            .paths
            .iter()
            .filter(|p| p.state == PathState::Active)
            .filter_map(|p| p.srtt)
            .max()
            .unwrap_or(DEFAULT_ROUND);
        self.evaluated.is_some_and(|t| ctx.now >= t + period)
    }

    fn new_round(&mut self, ctx: &SchedContext<'_>) {
        self.round = ctx.adverts;
        self.evaluated = Some(ctx.now);
        if self.awnd.len() == self.cfg.window {
            self.awnd.remove(0);
        }
        self.awnd.push(ctx.peer_awnd);
        let delta = awnd_delta(&self.awnd);
        let falling = self.prev_delta.is_none_or(|p| delta - p < 0.0);
        self.prev_delta = Some(delta);
        let blocking = match self.cfg.flavour {
            Flavour::MptcpRec => delta < 0.0 && falling,
            Flavour::CmtRev => ctx.peer_rwnd < ctx.chunk_len as u64,
        };
        let active = |p: &&PathView| p.state == PathState::Active;
        let mut removed = None;
        if blocking {
            self.quiet = 0;
            let listed: Vec<&PathView> = ctx
                .paths
                .iter()
                .filter(active)
                .filter(|p| !self.unused[p.id.0])
                .collect();
            if listed.len() > 1 {
                let worst = listed
                    .iter()
                    .min_by(|a, b| rate(a).total_cmp(&rate(b)).then(b.id.cmp(&a.id)))
                    .expect("two or more");
                self.unused[worst.id.0] = true;
                self.removals += 1;
                removed = Some(worst.id);
            }
        } else {
            self.quiet += 1;
            let full = match self.cfg.flavour {
                Flavour::MptcpRec => true,
                Flavour::CmtRev => self.quiet >= self.cfg.quiet_rounds,
            };
            if full {
                self.unused.iter_mut().for_each(|u| *u = false);
            }
        }
        // Re-add any removed path now faster than the slowest listed one.
        let min_listed = ctx
            .paths
            .iter()
            .filter(active)
            .filter(|p| !self.unused[p.id.0])
            .map(rate)
            .fold(f64::INFINITY, f64::min);
        for p in ctx.paths.iter().filter(active) {
            if self.unused[p.id.0] && Some(p.id) != removed && rate(p) > min_listed {
                self.unused[p.id.0] = false;
            }
        }
        for (due, unused) in self.probe_due.iter_mut().zip(&self.unused) {
            *due = *unused && self.cfg.probe;
        }
    }
}

impl Scheduler for ReceiverDriven {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        if ctx.adverts == 0 {
            return ctx
                .paths
                .iter()
                .filter(|p| p.can_send)
                .min_by_key(|p| (p.srtt.is_none(), p.srtt, p.id))
                .map(|p| p.id);
        }
        if self.round_due(ctx) {
            self.new_round(ctx);
        }
        if let Some(p) = ctx
            .paths
            .iter()
            .find(|p| self.probe_due[p.id.0] && p.can_send)
        {
            self.probe_due[p.id.0] = false;
            return Some(p.id);
        }
        ctx.paths
            .iter()
            .filter(|p| p.can_send && !self.unused[p.id.0])
            .max_by(|a, b| rate(a).total_cmp(&rate(b)).then(b.id.cmp(&a.id)))
            .map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};
    use crate::time::{Duration, Time};

    fn paths(rates: &[f64]) -> Vec<PathView> {
        rates
            .iter()
            .enumerate()
            .map(|(i, &r)| PathView {
                advertised_rate: Some(r),
                ..view(i, 60_000, 0, 50, true)
            })
            .collect()
    }

    #[test]
    fn awnd_delta_table() {
        // (observations, Δawnd)
        let cases: &[(&[u64], f64)] = &[
            (&[], 0.0),
            (&[100, 100, 100], 0.0),
            (&[100, 50], -0.5),            // avg 75, (50 − 75)/50
            (&[0, 100], 0.5),              // avg 50, (100 − 50)/100
            (&[80, 100, 60, 20], -0.5625), // avg 65, (20 − 65)/80
        ];
        for (obs, want) in cases {
            assert!((awnd_delta(obs) - want).abs() < 1e-12, "{obs:?}");
        }
    }

    #[test]
    fn dds_rev_fills_the_fastest_advertised_path_first() {
        let mut s = ReceiverDrivenFactory::from_params(Flavour::MptcpRec, &Params::default())
            .unwrap()
            .build(3);
        let mut p = paths(&[100.0, 300.0, 200.0]);
        let mut c = ctx(&p);
        c.adverts = 1;
        assert_eq!(s.select(&c), Some(PathId(1)));
        p[1].can_send = false;
        let mut c = ctx(&p);
        c.adverts = 1;
        assert_eq!(s.select(&c), Some(PathId(2)));
    }

    #[test]
    fn a_falling_window_removes_the_slowest_path_and_a_recovered_rate_restores_it() {
        let f = ReceiverDrivenFactory::from_params(
            Flavour::MptcpRec,
            &Params(
                [("probe".to_string(), crate::params::ParamValue::Bool(false))]
                    .into_iter()
                    .collect(),
            ),
        )
        .unwrap();
        let mut s = ReceiverDriven::new(f, 2);
        let p = paths(&[300.0, 100.0]);
        let round = |s: &mut ReceiverDriven, adverts: u64, awnd: u64, p: &[PathView]| {
            let mut c = ctx(p);
            c.adverts = adverts;
            c.peer_awnd = awnd;
            s.select(&c)
        };
        round(&mut s, 1, 60_000, &p);
        round(&mut s, 2, 60_000, &p);
        assert_eq!(s.candidates(), vec![true, true]);
        // The window drops: Δ = (50 − 56.7)/10 < 0 and falling → path 1 (lowest rate)
        // removed.
        round(&mut s, 3, 50_000, &p);
        assert_eq!(s.candidates(), vec![true, false]);
        assert_eq!(s.removals, 1);
        // Still falling (Δ = −0.708 < −0.667), so no return to all paths; but path 1's
        // rate now exceeds path 0's: it comes back. Path 0, the last listed, stays.
        let better = paths(&[300.0, 400.0]);
        round(&mut s, 4, 0, &better);
        assert_eq!(s.candidates(), vec![true, true]);
        assert_eq!(s.removals, 1);
    }

    #[test]
    fn without_new_adverts_the_subset_is_still_evaluated_every_round_trip() {
        // Adverts stop (all lost): the window keeps falling and the slowest path must
        // still go, one SRTT (50 ms here) after the last evaluation.
        let f = ReceiverDrivenFactory::from_params(Flavour::MptcpRec, &Params::default());
        let mut s = ReceiverDriven::new(f.unwrap(), 2);
        let p = paths(&[300.0, 100.0]);
        let at = |ms: u64, awnd: u64| {
            let mut c = ctx(&p);
            c.adverts = 2;
            c.now = Time::ZERO + Duration::from_millis(ms);
            c.peer_awnd = awnd;
            c
        };
        s.select(&at(0, 60_000));
        s.select(&at(10, 20_000)); // not a round trip yet: not an observation
        s.select(&at(50, 60_000));
        assert_eq!(s.candidates(), vec![true, true]);
        // A round trip later the window has fallen: the slowest path is removed.
        s.select(&at(100, 30_000));
        assert_eq!(s.candidates(), vec![true, false]);
    }

    #[test]
    fn pam_rev_removes_a_path_only_after_actual_blocking_not_on_a_falling_window() {
        // The same falling window that makes PCDer remove the slowest path leaves
        // PAM-rev's list alone while the peer window has room; a round that ends with
        // the window below one chunk (1452 bytes here) removes it.
        let f = ReceiverDrivenFactory::from_params(Flavour::CmtRev, &Params::default());
        let mut s = ReceiverDriven::new(f.unwrap(), 2);
        let p = paths(&[300.0, 100.0]);
        let round = |s: &mut ReceiverDriven, adverts: u64, awnd: u64, rwnd: u64| {
            let mut c = ctx(&p);
            c.adverts = adverts;
            c.peer_awnd = awnd;
            c.peer_rwnd = rwnd;
            s.select(&c);
        };
        for (a, w) in [(1, 60_000), (2, 50_000), (3, 40_000), (4, 30_000)] {
            round(&mut s, a, w, 20_000);
            assert_eq!(s.candidates(), vec![true, true], "advert {a}");
        }
        round(&mut s, 5, 30_000, 1000);
        assert_eq!(s.candidates(), vec![true, false]);
        assert_eq!(s.removals, 1);
    }

    #[test]
    fn never_removes_the_last_path() {
        let mut s = ReceiverDrivenFactory::from_params(Flavour::CmtRev, &Params::default())
            .unwrap()
            .build(1);
        let p = paths(&[100.0]);
        for (a, w) in [(1, 60_000), (2, 40_000), (3, 20_000)] {
            let mut c = ctx(&p);
            c.adverts = a;
            c.peer_awnd = w;
            assert_eq!(s.select(&c), Some(PathId(0)));
        }
    }
}
