//! The path-use policies of Apple's MPTCP service types (xnu's `bsd/netinet/mptcp.c`,
//! `mptcp_get_subflow`, `mptcp_choose_subflow`, `mptcp_subflow_is_slow`; xnu-7195, 2021;
//! docs/algorithms.md §9.6): one path at a time, never aggregation.
//!
//! The paths form two classes, cellular (parameter `cellular`, a path index, default 1:
//! the second path, as in a WiFi + cellular pair) and the others (WiFi). In each class
//! the choice is the lowest-SRTT path, a path with consecutive timeouts giving way to
//! one without; the first path of the class when none has an RTT yet. Then:
//!
//! * `ios-handover`: the WiFi choice, unless it is *slow* — at least 2 × `fail_threshold`
//!   (1) consecutive timeouts — when the cellular choice takes over. (xnu also asks its
//!   Symptoms daemon whether WiFi is unusable, from radio signals this simulator has
//!   not: taken as yes here, decision D40.)
//! * `ios-interactive`: the cellular choice when the WiFi choice's SRTT is at least
//!   `rtt_threshold_ms` (600) and the cellular one's below, or the WiFi choice is slow
//!   (`fail_threshold` consecutive timeouts) and the cellular one has none, or the WiFi
//!   choice's RTO is at least `rto_threshold_ms` (1500) and the cellular one's below
//!   (both thresholds halved once WiFi has a timeout: xnu's Symptoms adjustment);
//!   otherwise WiFi.
//!
//! The chosen path sends only if its window has room; otherwise nothing is sent (xnu's
//! `mptcp_return_subflow`).

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::time::Duration;
use crate::view::{PathId, PathState, PathView};

/// Apple's service types modelled here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ServiceType {
    /// WiFi until it is slow, then cellular.
    Handover,
    /// The lower-latency path, switching on RTT, timeouts and RTO.
    Interactive,
}

/// Factory for [`Ios`]; parameters `cellular`, `fail_threshold`, `rtt_threshold_ms`,
/// `rto_threshold_ms`.
#[derive(Clone, Debug)]
pub struct IosFactory {
    mode: ServiceType,
    cellular: usize,
    fail_threshold: u32,
    rtt_threshold: Duration,
    rto_threshold: Duration,
}

impl IosFactory {
    /// Reads and validates parameters for `mode`.
    pub fn from_params(mode: ServiceType, params: &Params) -> Result<Self, ParamError> {
        let name = match mode {
            ServiceType::Handover => "ios-handover",
            ServiceType::Interactive => "ios-interactive",
        };
        params.expect_only(
            name,
            &[
                "cellular",
                "fail_threshold",
                "rtt_threshold_ms",
                "rto_threshold_ms",
            ],
        )?;
        let cellular = params.count("cellular", 1)? as usize;
        let fail_threshold = params.count("fail_threshold", 1)?.clamp(1, 100) as u32;
        Ok(IosFactory {
            mode,
            cellular,
            fail_threshold,
            rtt_threshold: Duration::from_millis(params.count("rtt_threshold_ms", 600)?),
            rto_threshold: Duration::from_millis(params.count("rto_threshold_ms", 1500)?),
        })
    }
}

impl SchedulerFactory for IosFactory {
    fn name(&self) -> &'static str {
        match self.mode {
            ServiceType::Handover => "ios-handover",
            ServiceType::Interactive => "ios-interactive",
        }
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Ios {
            factory: self.clone(),
        })
    }
}

/// One service type's policy (it keeps no state of its own).
#[derive(Clone, Debug)]
pub struct Ios {
    factory: IosFactory,
}

/// `mptcp_choose_subflow` over a class: the lower SRTT wins if it has no timeouts or
/// the current choice has some; a path without timeouts beats one with.
fn choose<'a>(paths: impl Iterator<Item = &'a PathView>) -> Option<&'a PathView> {
    let mut best: Option<&PathView> = None;
    for p in paths {
        let lower = match (p.srtt, best.and_then(|b| b.srtt)) {
            (Some(s), Some(b)) => s < b,
            (Some(_), None) => true,
            (None, _) => false,
        };
        let lossy = |v: &PathView| v.error_count > 0;
        let take = match best {
            None => true,
            Some(b) => (lower && (!lossy(p) || lossy(b))) || (lossy(b) && !lossy(p)),
        };
        if take {
            best = Some(p);
        }
    }
    best
}

impl Ios {
    /// The interactive type's switch to the cellular choice `c` from WiFi's `w`.
    fn interactive_switch(&self, w: &PathView, c: &PathView) -> bool {
        let f = &self.factory;
        let unusable = w.error_count > 0;
        let halve = |d: Duration| if unusable { d.mul_div(1, 2) } else { d };
        let (rtt_t, rto_t) = (halve(f.rtt_threshold), halve(f.rto_threshold));
        let rtt = matches!((w.srtt, c.srtt), (Some(a), Some(b)) if a >= rtt_t && b < rtt_t);
        let slow = w.error_count >= f.fail_threshold && c.error_count == 0;
        let rto = w.rto >= rto_t && c.rto < rto_t;
        rtt || slow || rto
    }
}

impl Scheduler for Ios {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        // Established subflows: the core's usable states (a path with timeouts is
        // potentially failed here; a backup path is still a subflow to this policy).
        let usable = |p: &&PathView| {
            matches!(
                p.state,
                PathState::Active | PathState::PotentiallyFailed | PathState::Standby
            )
        };
        let wifi = choose(
            ctx.paths
                .iter()
                .filter(usable)
                .filter(|p| p.id.0 != self.factory.cellular),
        );
        let cell = choose(
            ctx.paths
                .iter()
                .filter(usable)
                .filter(|p| p.id.0 == self.factory.cellular),
        );
        let chosen = match (wifi, cell) {
            (None, c) => c,
            (w, None) => w,
            (Some(w), Some(c)) => Some(match self.factory.mode {
                ServiceType::Handover => {
                    if w.error_count >= 2 * self.factory.fail_threshold {
                        c
                    } else {
                        w
                    }
                }
                ServiceType::Interactive => {
                    if self.interactive_switch(w, c) {
                        c
                    } else {
                        w
                    }
                }
            }),
        }?;
        chosen.can_send.then_some(chosen.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    fn sched(mode: ServiceType) -> Box<dyn Scheduler> {
        IosFactory::from_params(mode, &Params::default())
            .unwrap()
            .build(2)
    }

    /// WiFi (path 0) and LTE (path 1: cellular by default).
    fn paths(wifi_rtt: u64, wifi_errors: u32, lte_rtt: u64) -> [PathView; 2] {
        let mut p = [
            view(0, 60_000, 0, wifi_rtt, true),
            view(1, 60_000, 0, lte_rtt, true),
        ];
        p[0].error_count = wifi_errors;
        p[0].state = if wifi_errors > 0 {
            PathState::PotentiallyFailed
        } else {
            PathState::Active
        };
        p
    }

    #[test]
    fn handover_stays_on_wifi_until_two_consecutive_timeouts() {
        // (WiFi RTT ms, WiFi consecutive timeouts, LTE RTT ms) -> path
        let cases = [
            (20, 0, 50, 0),
            (900, 0, 50, 0), // slow but answering WiFi is kept
            (20, 1, 50, 0),  // one timeout: still WiFi (it cannot send; wait)
            (20, 2, 50, 1),
        ];
        for (w, e, l, want) in cases {
            let mut p = paths(w, e, l);
            // A WiFi path with a timeout has no room (cwnd of one MTU in flight).
            p[0].can_send = e == 0;
            let got = sched(ServiceType::Handover).select(&ctx(&p));
            let expect = (want == 1 || e == 0).then_some(PathId(want));
            assert_eq!(got, expect, "wifi {w} ms, {e} timeouts, lte {l} ms");
        }
    }

    #[test]
    fn interactive_moves_to_cellular_on_a_high_rtt_a_timeout_or_a_long_rto() {
        let s = |p: &[PathView]| sched(ServiceType::Interactive).select(&ctx(p));
        assert_eq!(s(&paths(20, 0, 50)), Some(PathId(0)));
        assert_eq!(s(&paths(650, 0, 50)), Some(PathId(1)), "RTT ≥ 600 ms");
        assert_eq!(s(&paths(650, 0, 700)), Some(PathId(0)), "both slow: WiFi");
        assert_eq!(s(&paths(20, 1, 50)), Some(PathId(1)), "one timeout");
        let mut p = paths(20, 0, 50);
        p[0].rto = Duration::from_millis(1600);
        assert_eq!(s(&p), Some(PathId(1)), "RTO ≥ 1.5 s");
    }

    #[test]
    fn within_a_class_a_path_without_timeouts_beats_a_faster_one_with() {
        let mut p = [
            view(0, 60_000, 0, 10, true),
            view(1, 60_000, 0, 30, true),
            view(2, 60_000, 0, 50, true),
        ];
        p[0].error_count = 1;
        assert_eq!(choose(p[..2].iter()).map(|v| v.id), Some(PathId(1)));
        p[0].error_count = 0;
        assert_eq!(choose(p[..2].iter()).map(|v| v.id), Some(PathId(0)));
        // Three paths, cellular = 2: the WiFi class is paths 0 and 1, of which the
        // faster, 0, is chosen; with path 0 cellular instead, path 1.
        for (cellular, want) in [(2.0, 0), (0.0, 1)] {
            let mut params = std::collections::BTreeMap::new();
            params.insert("cellular".to_string(), crate::ParamValue::Number(cellular));
            let f = IosFactory::from_params(ServiceType::Handover, &Params(params)).unwrap();
            assert_eq!(f.build(3).select(&ctx(&p)), Some(PathId(want)));
        }
    }
}
