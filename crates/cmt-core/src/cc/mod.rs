//! Congestion control: one controller instance per path, built by a factory.
//!
//! The shape follows quinn-proto's `congestion.rs`: a trait for the per-path state
//! machine and a config struct that is also its factory. [`builtin`] is the one table that
//! maps scenario names to factories ([`REGISTRY`] adds any registered at run time).

/// The trait methods a controller built on [`Reno`] (in a field `reno`) takes from it
/// unchanged: the window getters, timeouts, idle decay and `set_cwnd`.
macro_rules! delegate_to_reno {
    () => {
        fn cwnd(&self) -> u64 {
            self.reno.cwnd()
        }
        fn ssthresh(&self) -> u64 {
            self.reno.ssthresh()
        }
        fn on_timeout(&mut self, loss: &LossSignal) {
            self.reno.on_timeout(loss);
        }
        fn on_idle(&mut self, mtu: u64, initial_cwnd: u64) {
            self.reno.on_idle(mtu, initial_cwnd);
        }
        fn set_cwnd(&mut self, cwnd: u64) {
            self.reno.set_cwnd(cwnd);
        }
    };
}

mod balia;
mod bbr;
mod cmt_qa;
mod cubic;
mod db_cmt;
mod hystart;
mod lia;
mod olia;
mod rate_sample;
mod receiver;
mod reno;
#[cfg(test)]
mod tests;

pub use balia::{balia_terms, Balia, BaliaFactory};
pub use bbr::{Bbr, BbrFactory, Mode as BbrMode};
pub use cmt_qa::{is_wireless_loss, CmtQaCc, CmtQaCcFactory};
pub use cubic::{Cubic, CubicFactory, CubicFlavour};
pub use db_cmt::{DbCmtCc, DbCmtCcFactory};
pub use hystart::{Exit as HyStartExit, HyStart};
pub use lia::{lia_alpha, Lia, LiaFactory};
pub use olia::{olia_epsilon, olia_increase, Olia, OliaFactory};
pub use rate_sample::{RateSample, RateSampler};
pub use receiver::{allowance, ReceiverCc, ReceiverCcFactory};
pub use reno::{Reno, RenoFactory};

use crate::registry::Table;
use crate::time::{Duration, Time};
use crate::view::PathId;

/// What a SACK did for one path, as seen by its controller.
#[derive(Clone, Debug)]
pub struct AckSignal {
    /// Time of the SACK.
    pub now: Time,
    /// Newly acknowledged DATA chunk bytes sent on this path that count for growth.
    pub bytes_acked: u64,
    /// The part of `bytes_acked` that counts toward partial_bytes_acked in congestion
    /// avoidance: all of it (RFC 9260 §7.2.2), or with ns-2.35 compatibility what
    /// `SendBufferDequeueUpTo` and `ProcessGapAckBlocks` add (cumulatively acked bytes
    /// only while the window was full, gap-acked bytes only from the new pseudo-cumack
    /// on).
    pub pba_bytes: u64,
    /// DATA chunk bytes in flight on this path before the SACK was processed.
    pub flight_before: u64,
    /// Path MTU in bytes.
    pub mtu: u64,
    /// Current smoothed RTT of the path.
    pub srtt: Option<Duration>,
    /// Minimum RTT of the path.
    pub min_rtt: Option<Duration>,
    /// When the most recently sent of the chunks this SACK newly acknowledged on the
    /// path left, among those sent once (Karn's rule): `now` minus it is the ack's round
    /// trip (Linux's `ca_rtt_us`).
    pub newest_sent: Option<Time>,
}

/// Snapshot of every path's window, for coupled controllers (LIA, OLIA, BALIA).
#[derive(Clone, Debug)]
pub struct CcPathView {
    /// Path.
    pub id: PathId,
    /// cwnd in bytes.
    pub cwnd: u64,
    /// Smoothed RTT.
    pub srtt: Option<Duration>,
    /// Bytes acked on the path between its last two congestion events or since the
    /// last one, whichever is larger (OLIA's ℓ).
    pub loss_interval: u64,
}

/// A loss signal for one path.
#[derive(Clone, Debug)]
pub struct LossSignal {
    /// Time of detection.
    pub now: Time,
    /// The window unit in bytes: the path MTU, or the largest DATA chunk with ns-2.35
    /// compatibility ([`Config::cwnd_unit`](crate::Config::cwnd_unit)).
    pub mtu: u64,
    /// Smoothed RTT of the path.
    pub srtt: Option<Duration>,
    /// Minimum RTT of the path.
    pub min_rtt: Option<Duration>,
    /// Largest SRTT the path has had (CMT-QA*'s RTTmax).
    pub max_srtt: Option<Duration>,
    /// The lowest ssthresh a loss may set: 4·MTU (RFC 9260 §7.2.3), or 2 DATA chunks
    /// with ns-2.35 compatibility (its CMT agent floors at `initialCwnd_` chunks).
    pub min_ssthresh: u64,
}

/// Per-path window state machine.
///
/// The window changes only through the `&mut self` methods: the core reads
/// [`cwnd`](Self::cwnd) and [`ssthresh`](Self::ssthresh) once after creating the
/// controller and once after each of those calls, and uses what they answered until the
/// next one. A coupled controller sees the other paths' windows through the
/// [`CcPathView`]s its `on_ack` gets, not through state shared with them.
pub trait CongestionControl: Send {
    /// Congestion window, bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold, bytes.
    fn ssthresh(&self) -> u64;
    /// Newly acknowledged data that advances the (pseudo-)cumulative ack on this path.
    fn on_ack(&mut self, ack: &AckSignal, all: &[CcPathView]);
    /// A fast-retransmit loss event (at most once per window, the core guarantees it).
    fn on_fast_retransmit(&mut self, loss: &LossSignal);
    /// The T3-rtx timer expired.
    fn on_timeout(&mut self, loss: &LossSignal);
    /// The path sent nothing for one RTO (RFC 4960 §7.2.1 idle decay).
    fn on_idle(&mut self, mtu: u64, initial_cwnd: u64);
    /// Force the window (CMT-PF recovery: `cwnd = pf_cwnd · MTU`).
    fn set_cwnd(&mut self, cwnd: u64);
    /// The receiver advertised `bytes_per_s` for this path (receiver-driven CMT, docs/algorithms.md
    /// §2.6); `srtt` is the path's smoothed RTT. Sender-side controllers ignore it.
    fn on_rate_advert(&mut self, _bytes_per_s: f64, _srtt: Option<Duration>, _mtu: u64) {}
    /// A rate-based controller (BBR): the core then tells it of every DATA packet sent
    /// ([`on_sent`](Self::on_sent)) and paces the path at its
    /// [`pacing_rate`](Self::pacing_rate). Asked once, when the controller is built.
    fn is_rate_based(&self) -> bool {
        false
    }
    /// A rate-based controller: a DATA packet of `bytes` left at `now`, with `flight`
    /// bytes in flight before it.
    fn on_sent(&mut self, _now: Time, _bytes: u64, _flight: u64) {}
    /// A rate-based controller: the rate to pace the path at, bytes/s (`None`: not yet).
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
}

/// Initial values handed to a controller.
#[derive(Clone, Debug)]
pub struct CcInit {
    /// Path MTU in bytes.
    pub mtu: u64,
    /// Initial cwnd in bytes.
    pub initial_cwnd: u64,
    /// Initial ssthresh in bytes.
    pub initial_ssthresh: u64,
}

/// Builds one controller per path.
pub trait CcFactory: Send + Sync {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// A controller for `path`.
    fn build(&self, path: PathId, init: &CcInit) -> Box<dyn CongestionControl>;
}

/// The built-in congestion controllers, one row each: name, aliases, summary, builder.
pub fn builtin() -> Table<dyn CcFactory> {
    Table::<dyn CcFactory>::new("congestion control")
        .row(
            "reno",
            &["rfc4960"],
            "per-path AIMD of RFC 4960 / RFC 9260 section 7.2, as ns-2.35",
            |p| Ok(Box::new(RenoFactory::from_params(p)?)),
        )
        .row(
            "cubic",
            &[],
            "CUBIC per path, uncoupled (RFC 9438; flavour = \"linux\" as Linux's tcp_cubic.c)",
            |p| Ok(Box::new(CubicFactory::from_params(p)?)),
        )
        .row(
            "linux-cubic",
            &[],
            "CUBIC as Linux's tcp_cubic.c runs it (cubic with flavour = \"linux\")",
            |p| Ok(Box::new(CubicFactory::linux_from_params(p)?)),
        )
        .row(
            "bbr",
            &[],
            "BBR v1, paced at its model of the path (Cardwell et al., ACM Queue 2016)",
            |p| {
                p.expect_only("bbr", &[])?;
                Ok(Box::new(BbrFactory))
            },
        )
        .row(
            "cmt-qa",
            &[],
            "Reno with wireless-loss differentiation (reconstruction of Xu et al., IEEE TMC 2013)",
            |p| Ok(Box::new(CmtQaCcFactory::from_params(p)?)),
        )
        .row(
            "db-cmt",
            &[],
            "D-DSP growth and D-FRP recovery (DB-CMT, 2022)",
            |p| Ok(Box::new(DbCmtCcFactory::from_params(p)?)),
        )
        .row(
            "a-cmt",
            &[],
            "DB-CMT's growth without its recovery rule (A-CMT)",
            |p| Ok(Box::new(DbCmtCcFactory::a_cmt(p)?)),
        )
        .row("lia", &[], "MPTCP coupled increase (RFC 6356)", |p| {
            Ok(Box::new(LiaFactory::from_params(p)?))
        })
        .row(
            "olia",
            &[],
            "opportunistic linked increases (Khalili et al., ToN 2013)",
            |p| Ok(Box::new(OliaFactory::from_params(p)?)),
        )
        .row(
            "balia",
            &[],
            "balanced linked adaptation (Peng et al., ToN 2016)",
            |p| Ok(Box::new(BaliaFactory::from_params(p)?)),
        )
        .row(
            "receiver",
            &[],
            "window set from the receiver's rate adverts (CMT-Rev 2015, MPTCP-rec 2016)",
            |p| Ok(Box::new(ReceiverCcFactory::from_params(p)?)),
        )
}

crate::extension_point!(CcFactory, "congestion control");

/// A factory from a name and a per-path constructor, for controllers without
/// parameters.
pub struct FnFactory<C> {
    name: &'static str,
    make: C,
}

impl<C> FnFactory<C>
where
    C: Fn(PathId, &CcInit) -> Box<dyn CongestionControl> + Send + Sync,
{
    /// `make(path, init)` builds each path's controller.
    pub fn new(name: &'static str, make: C) -> Self {
        FnFactory { name, make }
    }
}

impl<C> CcFactory for FnFactory<C>
where
    C: Fn(PathId, &CcInit) -> Box<dyn CongestionControl> + Send + Sync,
{
    fn name(&self) -> &'static str {
        self.name
    }
    fn build(&self, path: PathId, init: &CcInit) -> Box<dyn CongestionControl> {
        (self.make)(path, init)
    }
}
