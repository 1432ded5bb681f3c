//! Receiver-driven CMT: the receiver, next to the wireless last hop, estimates each
//! path's sending rate and advertises it; the sender paces each path at that rate and
//! only orders paths and picks a subset (Cao et al. 2015, CMT-Rev; MPTCP-rec 2016; docs/algorithms.md
//! §2–3).
//!
//! * [`tear`] — the receiver's per-path TEAR-like window (a reconstruction);
//! * [`estimator`] — RTT from rounds, the rate update and the smoothing;
//! * [`receiver`] — rounds, timers and adverts for all paths of an association.
//!
//! The sender's side lives with the other algorithms: the `receiver` congestion
//! controller turns adverts into windows and pacing rates, and the `cmt-rev` and
//! `mptcp-rec` schedulers choose the paths.

pub mod estimator;
pub mod receiver;
pub mod tear;

pub use estimator::{EstimatorConfig, RateEstimator};
pub use receiver::{RevConfig, RevReceiver};
pub use tear::{Tear, TearState};
