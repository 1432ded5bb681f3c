//! What a deployed stack runs besides its scheduler, retransmission policy and
//! congestion control: the settings a preset gives an association for every key the
//! user leaves out. One table for the simulator's scenarios and the runtime's
//! `--preset`, so that a preset means the same thing in both (docs/algorithms.md §9.4–§9.5,
//! decisions D43, D52–D55, D57).

use crate::config::{Config, Recovery, Reinject, SendBuffer};
use crate::time::Duration;

/// A setting a preset may give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// `recovery`: loss detection.
    Recovery,
    /// `reinject`.
    Reinject,
    /// `send_buffer`.
    SendBuffer,
    /// `prr`: Proportional Rate Reduction.
    Prr,
    /// `rto_min`.
    RtoMin,
    /// `rto_initial`.
    RtoInitial,
    /// `rto_max`.
    RtoMax,
    /// `initial_window`.
    InitialWindow,
    /// `max_burst`.
    MaxBurst,
    /// `sack_delay`: the delayed-ack time.
    SackDelay,
    /// `pf`: the potentially-failed state.
    Pf,
    /// `pfmr`: its threshold.
    Pfmr,
    /// `ack_filled_holes`: a SACK at once for a chunk that fills the front hole.
    AckFilledHoles,
}

/// Gives `config` preset `name`'s settings, except those `given` says the user set.
/// Names without settings of their own (the papers' presets) change nothing.
///
/// - `linux-mptcp`, upstream Linux MPTCP: RACK-TLP loss detection per subflow, its
///   reinjection of a stalled subflow's data on another, its connection-level send
///   buffer, Proportional Rate Reduction of each window cut (RFC 9937), Linux's TCP
///   timers (RTO.Min 200 ms, RTO.Initial 1 s, RTO.Max 120 s; `tcp.h`), an initial
///   window of 10 (RFC 6928), no burst limit and 40 ms delayed acks (`TCP_DELACK_MIN`).
///   CMT's DAC stays on: each MPTCP subflow has its own in-order sequence space and so
///   delays its acks while the other subflows' data arrives, which is what DAC gives
///   one TSN space. A chunk that fills the hole at the front of the sequence is SACKed
///   at once, as TCP acks a segment that fills a gap (`ack_filled_holes`).
/// - `picoquic-rr`, picoquic: QUIC's loss recovery per path (RFC 9002, multipath
///   QUIC's per-path probe timeouts), the peer's `max_ack_delay` of 25 ms as its
///   delayed-ack time and RTO.Min (heartbeats and idle decay), the 1 s initial probe
///   timeout of `kInitialRtt`, an initial window and burst limit of 10 packets, and a
///   path that timed out demoted until acknowledged again (CMT-PF after one timeout:
///   picoquic takes no data to a path with retransmissions pending while another has
///   none).
pub fn apply(name: &str, config: &mut Config, given: impl Fn(Key) -> bool) {
    let ms = Duration::from_millis;
    let mut set = |key: Key, apply: &mut dyn FnMut(&mut Config)| {
        if !given(key) {
            apply(config);
        }
    };
    match name {
        "linux-mptcp" => {
            set(Key::Recovery, &mut |c| c.recovery = Recovery::RackTlp);
            set(Key::Reinject, &mut |c| c.reinject = Reinject::Linux);
            set(Key::SendBuffer, &mut |c| c.send_buffer = SendBuffer::Linux);
            set(Key::Prr, &mut |c| c.prr = true);
            set(Key::RtoMin, &mut |c| c.rto_min = ms(200));
            set(Key::RtoInitial, &mut |c| c.rto_initial = ms(1_000));
            set(Key::RtoMax, &mut |c| c.rto_max = ms(120_000));
            set(Key::InitialWindow, &mut |c| c.initial_window = Some(10));
            set(Key::MaxBurst, &mut |c| c.max_burst = 0);
            set(Key::SackDelay, &mut |c| c.sack_delay = ms(40));
            set(Key::AckFilledHoles, &mut |c| c.ack_filled_holes = true);
        }
        "picoquic-rr" => {
            set(Key::Recovery, &mut |c| c.recovery = Recovery::Quic);
            set(Key::RtoMin, &mut |c| c.rto_min = ms(25));
            set(Key::RtoInitial, &mut |c| c.rto_initial = ms(1_000));
            set(Key::InitialWindow, &mut |c| c.initial_window = Some(10));
            set(Key::MaxBurst, &mut |c| c.max_burst = 10);
            set(Key::SackDelay, &mut |c| c.sack_delay = ms(25));
            set(Key::Pf, &mut |c| c.pf_enabled = true);
            set(Key::Pfmr, &mut |c| c.pfmr = 0);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_key_keeps_the_users_value_and_the_rest_follow_the_preset() {
        let mut c = Config {
            sack_delay: Duration::from_millis(7),
            ..Config::default()
        };
        apply("linux-mptcp", &mut c, |k| k == Key::SackDelay);
        assert_eq!(c.sack_delay, Duration::from_millis(7));
        assert_eq!(c.recovery, Recovery::RackTlp);
        assert_eq!(c.send_buffer, SendBuffer::Linux);
        assert_eq!((c.initial_window, c.max_burst), (Some(10), 0));
        assert!(c.ack_filled_holes);
        let mut p = Config::default();
        apply("picoquic-rr", &mut p, |_| false);
        assert_eq!((p.recovery, p.max_burst, p.pfmr), (Recovery::Quic, 10, 0));
        assert_eq!(p.sack_delay, Duration::from_millis(25));
        // A paper's preset names algorithms only.
        let mut d = Config::default();
        apply("db-cmt", &mut d, |_| false);
        assert_eq!(d.sack_delay, Config::default().sack_delay);
    }
}
