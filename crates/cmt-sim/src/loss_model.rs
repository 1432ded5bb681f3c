//! Named loss models: the simulator's extension point for packet loss.
//!
//! A link's `loss` (Bernoulli) and `gilbert` (Gilbert–Elliott) keys cover the studies;
//! anything else — a trace of loss events, a periodic pattern, a model from a paper — is
//! a [`LossModel`] registered by name in [`REGISTRY`] and chosen per link with
//! `loss_model = "name"` and `loss_model_params = { … }`. It acts in series with the
//! other two, on the directions `loss_direction` names, with the link's loss stream.

use std::sync::Arc;

use cmt_core::registry::Table;
use cmt_core::{ParamError, Params, Time};
use rand::RngCore;

/// The loss state of one link direction.
pub trait LossModel: Send {
    /// Whether the packet of `size` bytes that finishes serialisation at `now` is lost.
    /// Draw randomness only from `rng` (the link direction's loss stream).
    fn lose(&mut self, now: Time, size: u32, rng: &mut dyn RngCore) -> bool;
}

/// Builds one [`LossModel`] per link direction, and tells the bounds how lossy it is.
pub trait LossModelFactory: Send + Sync {
    /// A model in its initial state.
    fn build(&self) -> Box<dyn LossModel>;
    /// Long-run fraction of packets lost (the oracle loss rate and the bounds use it).
    fn mean_loss(&self) -> f64;
    /// Per-packet rate at which loss episodes begin, a burst counted once (the
    /// congestion-control-aware bound uses it); by default every loss is its own episode.
    fn episode_rate(&self) -> f64 {
        self.mean_loss()
    }
}

/// ns-2's `ErrorModel/Periodic`: of every `period` packets, the one at position
/// `offset` (0-based) is lost.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Periodic {
    /// Packets per cycle (≥ 1).
    pub period: u64,
    /// Position of the lost packet in each cycle (< period).
    pub offset: u64,
}

impl Periodic {
    /// Reads `period` (required) and `offset` (default 0).
    pub fn from_params(p: &Params) -> Result<Self, ParamError> {
        p.expect_only("periodic", &["period", "offset"])?;
        let period = p.count("period", 0)?;
        let offset = p.count("offset", 0)?;
        if period == 0 {
            return Err(ParamError("`period` must be at least 1".into()));
        }
        if offset >= period {
            return Err(ParamError(format!(
                "`offset` {offset} must be below `period` {period}"
            )));
        }
        Ok(Periodic { period, offset })
    }
}

struct PeriodicState {
    spec: Periodic,
    seen: u64,
}

impl LossModel for PeriodicState {
    fn lose(&mut self, _now: Time, _size: u32, _rng: &mut dyn RngCore) -> bool {
        let lost = self.seen % self.spec.period == self.spec.offset;
        self.seen += 1;
        lost
    }
}

impl LossModelFactory for Periodic {
    fn build(&self) -> Box<dyn LossModel> {
        Box::new(PeriodicState {
            spec: *self,
            seen: 0,
        })
    }
    fn mean_loss(&self) -> f64 {
        1.0 / self.period as f64
    }
}

/// The built-in loss models, one row each.
pub fn builtin() -> Table<dyn LossModelFactory> {
    Table::<dyn LossModelFactory>::new("loss model").row(
        "periodic",
        &[],
        "one packet of every `period` lost, at `offset` (ns-2 ErrorModel/Periodic)",
        |p| Ok(Box::new(Periodic::from_params(p)?)),
    )
}

cmt_core::extension_point!(LossModelFactory, "loss model");

/// A link's chosen loss model: its name, parameters and factory.
#[derive(Clone)]
pub struct LossModelSpec {
    /// Registry name.
    pub name: String,
    /// Its parameters.
    pub params: Params,
    /// The factory built from them.
    pub factory: Arc<dyn LossModelFactory>,
}

impl LossModelSpec {
    /// Looks `name` up in the process-wide table and builds it from `params`.
    pub fn new(name: &str, params: Params) -> Result<Self, ParamError> {
        let factory: Arc<dyn LossModelFactory> = REGISTRY.build(name, &params)?.into();
        Ok(LossModelSpec {
            name: name.to_string(),
            params,
            factory,
        })
    }
}

impl std::fmt::Debug for LossModelSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LossModelSpec")
            .field("name", &self.name)
            .field("params", &self.params)
            .finish_non_exhaustive()
    }
}

impl PartialEq for LossModelSpec {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.params == other.params
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmt_core::ParamValue;

    fn params(kv: &[(&str, f64)]) -> Params {
        Params(
            kv.iter()
                .map(|(k, v)| (k.to_string(), ParamValue::Number(*v)))
                .collect(),
        )
    }

    #[test]
    fn periodic_loses_exactly_the_packet_at_offset_of_each_period() {
        let spec =
            LossModelSpec::new("periodic", params(&[("period", 4.0), ("offset", 1.0)])).unwrap();
        let mut m = spec.factory.build();
        let mut rng = crate::rng::stream(1, "t");
        let lost: Vec<usize> = (0..12)
            .filter(|_| m.lose(Time::ZERO, 1500, &mut rng))
            .collect();
        assert_eq!(lost, [1, 5, 9]);
        assert_eq!(spec.factory.mean_loss(), 0.25);
    }

    #[test]
    fn periodic_refuses_a_zero_period_and_an_offset_outside_it() {
        for (kv, msg) in [
            (vec![], "`period` must be at least 1"),
            (
                vec![("period", 3.0), ("offset", 3.0)],
                "`offset` 3 must be below `period` 3",
            ),
        ] {
            let e = LossModelSpec::new("periodic", params(&kv)).err().unwrap();
            assert_eq!(e.0, msg);
        }
        let e = LossModelSpec::new("nope", Params::default()).err().unwrap();
        assert_eq!(e.0, "unknown loss model `nope` (known: periodic)");
    }
}
