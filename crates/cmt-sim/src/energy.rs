//! Radio energy per path: the power model of Huang, Qian, Gerber, Mao, Sen, Spatscheck,
//! "A Close Examination of Performance and Power Characteristics of 4G LTE Networks",
//! ACM MobiSys 2012 (docs/metrics.md "Cost and energy", decision D39).
//!
//! Each path with a `radio` is one interface of the device (the receiver by default,
//! `metrics.device`), and every packet of the association the device sends or receives
//! on the path — data, SACKs, heartbeats, sizes as on the wire — goes through it. Its energy is the promotion from idle, the data-transfer power
//! `β + α_u·u + α_d·d` (mW, u and d the uplink and downlink rates in Mbit/s), and the
//! tail after the last packet:
//!
//! * the throughput terms add up to `α_u·(uplink Mbit) + α_d·(downlink Mbit)` mJ, however
//!   the bits are spread in time;
//! * between two packets `g` seconds apart the radio draws β for the first
//!   `min(g, active_gap)` (still transferring: LTE's DRX inactivity timer), then the tail
//!   power until `tail` seconds after the first packet; a packet after a whole tail finds
//!   the radio idle and pays a promotion;
//! * the first packet pays a promotion, the last one a whole tail (counted even past the
//!   end of the run: the device spends it).

use cmt_core::Time;

use crate::scenario::ParamTable;

/// One interface's power model. Powers in mW, times in s.
#[derive(Clone, Debug, PartialEq)]
pub struct RadioModel {
    /// Preset it started from (`lte`, `wifi`).
    pub kind: String,
    /// Uplink power per Mbit/s (α_u), mW.
    pub alpha_up: f64,
    /// Downlink power per Mbit/s (α_d), mW.
    pub alpha_down: f64,
    /// Power while transferring (β), mW.
    pub base: f64,
    /// Promotion from idle: duration and power.
    pub promotion_s: f64,
    /// Power during a promotion, mW.
    pub promotion_mw: f64,
    /// Tail after the last packet: duration and power.
    pub tail_s: f64,
    /// Power during the tail, mW.
    pub tail_mw: f64,
    /// A gap between packets up to this long is still transfer (β), s.
    pub active_gap_s: f64,
}

/// The parameters `radio_params` may set.
const KEYS: [&str; 8] = [
    "alpha_up",
    "alpha_down",
    "base",
    "promotion_s",
    "promotion_mw",
    "tail_s",
    "tail_mw",
    "active_gap_s",
];

impl RadioModel {
    /// Huang et al. 2012's measured LTE and WiFi models (their Tables 3 and 4); the
    /// transfer gap is LTE's DRX inactivity timer (100 ms), for WiFi the same bound.
    pub fn preset(kind: &str) -> Option<RadioModel> {
        let (alpha_up, alpha_down, base, promotion, tail) = match kind {
            "lte" => (438.39, 51.97, 1288.04, (0.2601, 1210.7), (11.576, 1060.0)),
            "wifi" => (283.17, 137.01, 132.86, (0.0791, 124.4), (0.2381, 119.3)),
            _ => return None,
        };
        Some(RadioModel {
            kind: kind.to_string(),
            alpha_up,
            alpha_down,
            base,
            promotion_s: promotion.0,
            promotion_mw: promotion.1,
            tail_s: tail.0,
            tail_mw: tail.1,
            active_gap_s: 0.1f64.min(tail.0),
        })
    }

    /// The preset `kind` with `params` overriding its values; errors name the key.
    pub fn build(kind: &str, params: &ParamTable) -> Result<RadioModel, String> {
        let mut m = Self::preset(kind)
            .ok_or_else(|| format!("unknown radio `{kind}` (known: lte, wifi)"))?;
        for (key, v) in params {
            let x = v
                .as_float()
                .or_else(|| v.as_integer().map(|i| i as f64))
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| format!("radio_params.{key}: a number ≥ 0"))?;
            let slot = match key.as_str() {
                "alpha_up" => &mut m.alpha_up,
                "alpha_down" => &mut m.alpha_down,
                "base" => &mut m.base,
                "promotion_s" => &mut m.promotion_s,
                "promotion_mw" => &mut m.promotion_mw,
                "tail_s" => &mut m.tail_s,
                "tail_mw" => &mut m.tail_mw,
                "active_gap_s" => &mut m.active_gap_s,
                _ => {
                    return Err(format!(
                        "radio_params.{key}: unknown (known: {})",
                        KEYS.join(", ")
                    ))
                }
            };
            *slot = x;
        }
        if m.active_gap_s > m.tail_s {
            return Err("radio_params.active_gap_s: at most tail_s".into());
        }
        Ok(m)
    }
}

/// Which endpoint is the device whose radios are modelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    /// The sender: data goes up, SACKs come down.
    Sender,
    /// The receiver (default: a phone downloading): data comes down, SACKs go up.
    Receiver,
}

impl Device {
    /// The simulator's endpoint of the device.
    pub fn endpoint(self) -> crate::ids::EndpointId {
        match self {
            Device::Sender => crate::ids::EndpointId::SENDER,
            Device::Receiver => crate::ids::EndpointId::RECEIVER,
        }
    }
}

/// Energy of one interface over a run, fed with its packets in time order.
#[derive(Clone, Debug)]
pub struct RadioMeter {
    model: RadioModel,
    last: Option<Time>,
    /// Promotion, transfer-base and tail energy so far, mJ (the tail after the last
    /// packet is added by [`joules`](Self::joules)).
    state_mj: f64,
    up_bytes: u64,
    down_bytes: u64,
}

impl RadioMeter {
    /// A meter of an idle interface.
    pub fn new(model: RadioModel) -> Self {
        RadioMeter {
            model,
            last: None,
            state_mj: 0.0,
            up_bytes: 0,
            down_bytes: 0,
        }
    }

    /// A packet of `bytes` on the wire at `now`, sent by the device (`up`) or received.
    pub fn packet(&mut self, now: Time, bytes: u64, up: bool) {
        let m = &self.model;
        let promotion = m.promotion_s * m.promotion_mw;
        self.state_mj += match self.last {
            None => promotion,
            Some(prev) => {
                let gap = now.saturating_since(prev).as_secs_f64();
                let mut e = m.base * gap.min(m.active_gap_s)
                    + m.tail_mw * (gap.min(m.tail_s) - m.active_gap_s).max(0.0);
                if gap > m.tail_s {
                    e += promotion;
                }
                e
            }
        };
        self.last = Some(now);
        if up {
            self.up_bytes += bytes;
        } else {
            self.down_bytes += bytes;
        }
    }

    /// The interface's energy, J: promotions, transfer, tails (the last one whole) and
    /// the per-bit terms. 0 for an interface that carried nothing.
    pub fn joules(&self) -> f64 {
        let m = &self.model;
        if self.last.is_none() {
            return 0.0;
        }
        let last_tail = m.base * m.active_gap_s + m.tail_mw * (m.tail_s - m.active_gap_s);
        let mbit = |b: u64| b as f64 * 8.0 / 1e6;
        let bits = m.alpha_up * mbit(self.up_bytes) + m.alpha_down * mbit(self.down_bytes);
        (self.state_mj + last_tail + bits) / 1e3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmt_core::Duration;

    fn at(s: f64) -> Time {
        Time::ZERO + Duration::from_secs_f64(s)
    }

    #[test]
    fn energy_is_promotion_transfer_tail_and_bits_by_the_definition() {
        let lte = RadioModel::preset("lte").unwrap();
        let mut m = RadioMeter::new(lte.clone());
        // 11 packets 10 ms apart (continuous transfer), a 2 s pause (tail, no new
        // promotion), one packet, a 20 s pause (a whole tail, then a promotion), one.
        for i in 0..=10 {
            m.packet(at(0.01 * i as f64), 1500, false);
        }
        m.packet(at(2.1), 1500, false);
        m.packet(at(22.1), 100, true);
        let promo = 0.2601 * 1210.7;
        let tail_whole = 1288.04 * 0.1 + 1060.0 * (11.576 - 0.1);
        let want_mj = promo                         // first packet
            + 1288.04 * 0.1                         // ten 10 ms gaps
            + (1288.04 * 0.1 + 1060.0 * 1.9)        // the 2 s gap
            + (tail_whole + promo)                  // the 20 s gap
            + tail_whole                            // after the last packet
            + 51.97 * (12.0 * 1500.0 * 8.0 / 1e6)   // downlink bits
            + 438.39 * (100.0 * 8.0 / 1e6); // uplink bits
        assert!(
            (m.joules() - want_mj / 1e3).abs() < 1e-9,
            "{} J vs {} J",
            m.joules(),
            want_mj / 1e3
        );
    }

    #[test]
    fn an_unused_interface_costs_nothing_and_lte_spends_a_short_transfer_mostly_in_its_tail() {
        assert_eq!(
            RadioMeter::new(RadioModel::preset("wifi").unwrap()).joules(),
            0.0
        );
        let run = |kind: &str| {
            let mut m = RadioMeter::new(RadioModel::preset(kind).unwrap());
            for i in 0..1000 {
                m.packet(at(0.001 * i as f64), 1500, false);
            }
            m.joules()
        };
        // 12 Mbit in one second: LTE spends 0.3 J promoting, 1.3 J transferring, 0.6 J
        // on bits and 12.3 J in its tail (Huang et al.: the tail is what makes LTE far
        // less efficient than WiFi); WiFi's whole cost is 1.8 J, mostly bits.
        let (lte, wifi) = (run("lte"), run("wifi"));
        let lte_tail = (1288.04 * 0.1 + 1060.0 * (11.576 - 0.1)) / 1e3;
        assert!(lte_tail / lte > 0.8, "{lte} J, tail {lte_tail} J");
        assert!(lte > 5.0 * wifi, "{lte} J vs {wifi} J");
    }

    #[test]
    fn parameters_override_the_preset_and_bad_ones_are_named() {
        let mut p = ParamTable::new();
        p.insert("tail_s".into(), toml::Value::Float(5.0));
        assert_eq!(RadioModel::build("lte", &p).unwrap().tail_s, 5.0);
        p.insert("tial_s".into(), toml::Value::Float(5.0));
        let e = RadioModel::build("lte", &p).unwrap_err();
        assert!(e.starts_with("radio_params.tial_s: unknown"), "{e}");
        assert!(RadioModel::build("5g", &ParamTable::new())
            .unwrap_err()
            .contains("unknown radio `5g`"));
        let mut p = ParamTable::new();
        p.insert("base".into(), toml::Value::Float(-1.0));
        assert!(RadioModel::build("wifi", &p).unwrap_err().contains("≥ 0"));
    }
}
