//! Packet loss models: Bernoulli (ns-2 `ErrorModel/Uniform`, docs/algorithms.md §11.1),
//! Gilbert–Elliott (docs/algorithms.md §11.2) and a named model from
//! [`loss_model`](crate::loss_model), applied in series.

use cmt_core::Time;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::loss_model::LossModel;

/// Two-state Markov loss per packet: good → bad with `p`, bad → good with `r`; a packet
/// is lost with `h_good` in the good state and `h_bad` in the bad state.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Gilbert {
    /// P(good → bad) per packet.
    pub p: f64,
    /// P(bad → good) per packet.
    pub r: f64,
    /// Loss probability in the good state.
    pub h_good: f64,
    /// Loss probability in the bad state.
    pub h_bad: f64,
}

impl Gilbert {
    /// The project's "1 % Markov loss" (docs/algorithms.md §11.2 decision D14): simple Gilbert, mean burst of
    /// 3 packets, stationary loss exactly 1 %.
    pub fn markov_1pct() -> Self {
        let r = 1.0 / 3.0;
        Gilbert {
            p: 0.01 * r / 0.99,
            r,
            h_good: 0.0,
            h_bad: 1.0,
        }
    }
    /// Per-packet rate at which loss episodes begin, for the congestion-control-aware
    /// bound: a loss in the good state, or a visit to the bad state (counted once,
    /// weighted by its loss probability): `r/(p + r) · (h_G + p·h_B)`. For the simple
    /// Gilbert model (h_G = 0, h_B = 1) this is the stationary loss over the mean burst
    /// length 1/r.
    pub fn episode_rate(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return self.h_good;
        }
        self.r / (self.p + self.r) * (self.h_good + self.p * self.h_bad)
    }

    /// Long-run fraction of packets lost: `(r·h_G + p·h_B)/(p + r)`.
    pub fn stationary_loss(&self) -> f64 {
        if self.p + self.r == 0.0 {
            return self.h_good;
        }
        (self.r * self.h_good + self.p * self.h_bad) / (self.p + self.r)
    }
}

/// The loss models of one link direction, with their state: Bernoulli, Gilbert–Elliott
/// and a named [`LossModel`], in series.
pub struct LossChain {
    bernoulli: f64,
    gilbert: Option<(Gilbert, bool)>,
    model: Option<Box<dyn LossModel>>,
}

impl std::fmt::Debug for LossChain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LossChain")
            .field("bernoulli", &self.bernoulli)
            .field("gilbert", &self.gilbert)
            .field("model", &self.model.is_some())
            .finish()
    }
}

impl LossChain {
    /// Bernoulli probability `p` (0 = none) in series with an optional Gilbert model
    /// (starting in the good state).
    pub fn new(bernoulli: f64, gilbert: Option<Gilbert>) -> Self {
        LossChain {
            bernoulli,
            gilbert: gilbert.map(|g| (g, false)),
            model: None,
        }
    }

    /// Adds a named loss model in series (it sees every packet).
    pub fn with_model(mut self, model: Option<Box<dyn LossModel>>) -> Self {
        self.model = model;
        self
    }

    /// Replaces the Bernoulli probability (link events).
    pub fn set_bernoulli(&mut self, p: f64) {
        self.bernoulli = p;
    }

    /// Decides the fate of one packet of `size` bytes leaving at `now`; true = lost.
    /// Bernoulli and Gilbert draw the same number of random values whatever the outcome,
    /// so a link's stream stays aligned.
    #[inline]
    pub fn lose(&mut self, now: Time, size: u32, rng: &mut ChaCha8Rng) -> bool {
        let mut lost = self.bernoulli > 0.0 && rng.gen::<f64>() < self.bernoulli;
        if let Some((g, bad)) = &mut self.gilbert {
            let flip: f64 = rng.gen();
            *bad = if *bad { flip >= g.r } else { flip < g.p };
            let h = if *bad { g.h_bad } else { g.h_good };
            lost |= h > 0.0 && rng.gen::<f64>() < h;
        }
        if let Some(m) = &mut self.model {
            lost |= m.lose(now, size, rng);
        }
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn markov_1pct_loses_one_percent_in_bursts_of_about_three() {
        let g = Gilbert::markov_1pct();
        assert!((g.stationary_loss() - 0.01).abs() < 1e-12);
        let mut chain = LossChain::new(0.0, Some(g));
        let mut rng = stream(1, "t");
        let n = 2_000_000;
        let (mut lost, mut bursts, mut prev) = (0u32, 0u32, false);
        for _ in 0..n {
            let l = chain.lose(Time::ZERO, 1500, &mut rng);
            lost += l as u32;
            bursts += (l && !prev) as u32;
            prev = l;
        }
        let rate = lost as f64 / n as f64;
        let mean_burst = lost as f64 / bursts as f64;
        assert!((rate - 0.01).abs() < 0.001, "loss rate {rate}");
        assert!((mean_burst - 3.0).abs() < 0.2, "mean burst {mean_burst}");
    }

    #[test]
    fn bernoulli_rate_matches() {
        let mut chain = LossChain::new(0.05, None);
        let mut rng = stream(2, "t");
        let lost = (0..400_000)
            .filter(|_| chain.lose(Time::ZERO, 1500, &mut rng))
            .count();
        assert!((lost as f64 / 400_000.0 - 0.05).abs() < 0.002);
    }
}
