//! The impairments a packet meets when it leaves a link direction, as small parts that
//! each return a [`Verdict`] (in the spirit of turmoil's rules and smoltcp's fault
//! injector): the link may be down, a loss model may drop it, and propagation gives
//! its arrival time (delay, jitter, FIFO order). [`super::Link`] applies them in that
//! order; each part owns its state and random stream.

use cmt_core::{Duration, Time};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Normal};

use super::DropCause;
use crate::loss::LossChain;

/// What an impairment decided for a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Let it through (to the next part).
    Pass,
    /// Drop it, for this reason.
    Drop(DropCause),
}

/// A link that can be taken down and brought back (scheduled failures, handovers).
#[derive(Debug, Default)]
pub(super) struct Outage {
    pub(super) down: bool,
}

impl Outage {
    pub(super) fn verdict(&self) -> Verdict {
        if self.down {
            Verdict::Drop(DropCause::Down)
        } else {
            Verdict::Pass
        }
    }
}

/// The loss models of the direction with their random stream.
pub(super) struct Lossy {
    pub(super) chain: LossChain,
    pub(super) rng: ChaCha8Rng,
}

impl Lossy {
    #[inline]
    pub(super) fn verdict(&mut self, now: Time, size: u32) -> Verdict {
        if self.chain.lose(now, size, &mut self.rng) {
            Verdict::Drop(DropCause::Loss)
        } else {
            Verdict::Pass
        }
    }
}

/// Propagation: delay, Gaussian (or half-normal) jitter, and FIFO order unless the
/// link reorders.
pub(super) struct Propagation {
    pub(super) delay: Duration,
    jitter: Option<Normal<f64>>,
    half: bool,
    reorder: bool,
    rng: ChaCha8Rng,
    last_arrival: Time,
}

impl Propagation {
    pub(super) fn new(
        delay: Duration,
        jitter: Duration,
        half: bool,
        reorder: bool,
        rng: ChaCha8Rng,
    ) -> Self {
        let sigma = jitter.as_nanos() as f64;
        Propagation {
            delay,
            jitter: (sigma > 0.0).then(|| Normal::new(0.0, sigma).expect("finite, positive sigma")),
            half,
            reorder,
            rng,
            last_arrival: Time::ZERO,
        }
    }

    /// When a packet that left at `now` arrives at the far end.
    #[inline]
    pub(super) fn arrival(&mut self, now: Time) -> Time {
        let mut at = now + self.delay;
        if let Some(n) = &self.jitter {
            let mut j = n.sample(&mut self.rng);
            if self.half {
                j = j.abs();
            }
            let ns = at.as_nanos() as f64 + j;
            at = Time::from_nanos(ns.max(now.as_nanos() as f64) as u64);
        }
        if !self.reorder {
            // FIFO: never overtake the previous packet.
            at = at.max(self.last_arrival);
            self.last_arrival = at;
        }
        at
    }
}
