//! Association configuration: the RFC 4960/9260 protocol constants and CMT switches.
//!
//! Defaults follow docs/algorithms.md §1.1: RFC values, except where the ns-2.35 value
//! the papers ran with differs and docs/algorithms.md picks it (e.g. `dupthresh = 3`).

use crate::time::Duration;

/// When the Max.Burst limit is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MaxBurstMode {
    /// In every transmission opportunity (RFC 9260 §6.1).
    #[default]
    Always,
    /// As ns-2.35's CMT agent does ("a proposed change to RFC 2960 section 7.2.4",
    /// `sctp-cmt.cc` `SendBufferDequeueUpTo`, `SendMuch`): not at all until a SACK
    /// cumulatively acknowledges a chunk that had been fast-retransmitted or
    /// retransmitted, and in every opportunity from then on (the agent never clears the
    /// flag). Until then one send opportunity may fill a path's whole cwnd. Use it to
    /// compare with results obtained in ns-2.
    Ns2,
}

/// Whose behaviour an association follows where RFC 9260 and ns-2.35's SCTP CMT module
/// (`sctp.cc`, `sctp-cmt.cc`, the simulator most CMT studies used) differ.
///
/// `Ns2` changes mechanics only, each mirroring one ns-2.35 function (docs/ns2.md lists
/// them): window arithmetic in units of the largest DATA chunk (`AdjustCwnd`, `Timeout`,
/// `SelectFromPFDests`), an ssthresh floor of two chunks (`FastRtx`, `Timeout` of the
/// CMT agent), partial_bytes_acked counted as `SendBufferDequeueUpTo` and
/// `ProcessGapAckBlocks` do, and Max.Burst as in `SendMuch`. Scenario files also take
/// ns-2's defaults from it (initial ssthresh 65536, Max.Burst mode "ns2").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compat {
    /// RFC 9260 (with CMT's SFR, CUC and DAC from Iyengar et al., ToN 2006).
    #[default]
    Rfc,
    /// ns-2.35's `Agent/SCTP/CMT`, for comparisons with results obtained in ns-2.
    Ns2,
}

/// Outage handling (docs/algorithms.md §1.7, D31, a departure from RFC 9260 §8.1–8.2 that
/// scenarios and the runtime ask for): the association does not count its paths'
/// timeouts against Association.Max.Retrans but fails only when nothing at all has been
/// heard from the peer for `tolerance` (or the peer aborts), so adding paths never
/// shortens the outage it survives; the RTO of a path stops doubling at
/// `probe_interval`, so a path that is down is retried (HEARTBEAT or retransmission) at
/// least that often and data flows again within about that time of a path's return
/// (at most twice it, plus a round trip), whatever the outage's length.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Outage {
    /// Longest silence of the peer, on every path at once, the association survives.
    pub tolerance: Duration,
    /// Largest RTO back-off: the longest wait between two tries of a path that
    /// stopped answering (a path whose RTO is already longer keeps its RTO).
    pub probe_interval: Duration,
}

impl Default for Outage {
    fn default() -> Self {
        Outage {
            tolerance: Duration::from_secs(300),
            probe_interval: Duration::from_millis(500),
        }
    }
}

/// Protocol parameters of one association endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Whose behaviour to follow where RFC 9260 and ns-2.35 differ.
    pub compat: Compat,
    /// Path MTU in bytes, including the IP header (`ip_header_len`).
    pub mtu: u32,
    /// Bytes below the SCTP common header counted against the MTU (20 for IPv4;
    /// 28 for IPv4 + UDP encapsulation).
    pub ip_header_len: u32,
    /// Receive buffer in bytes; the advertised window is `rbuf − bytes held`.
    pub rbuf: u32,
    /// RTO.Initial.
    pub rto_initial: Duration,
    /// RTO.Min.
    pub rto_min: Duration,
    /// RTO.Max.
    pub rto_max: Duration,
    /// Max.Burst: new-data packets per path per transmission opportunity (0 = unlimited).
    pub max_burst: u32,
    /// When Max.Burst applies.
    pub max_burst_mode: MaxBurstMode,
    /// Path.Max.Retrans: a path whose error count exceeds this becomes INACTIVE.
    pub path_max_retrans: u32,
    /// Association.Max.Retrans: the association fails when its error count exceeds this.
    pub assoc_max_retrans: u32,
    /// Send HEARTBEATs on idle paths.
    pub heartbeats: bool,
    /// HB.interval.
    pub hb_interval: Duration,
    /// Delayed-SACK timer.
    pub sack_delay: Duration,
    /// SACK at least every `sack_freq` DATA packets.
    pub sack_freq: u32,
    /// Missing reports that trigger fast retransmit (docs/algorithms.md §1.3: 3 per RFC 4960, 4 per RFC 2960).
    pub dupthresh: u32,
    /// CMT Split Fast Retransmit (docs/algorithms.md §1.4).
    pub sfr: bool,
    /// CMT Cwnd Update for CMT (docs/algorithms.md §1.4).
    pub cuc: bool,
    /// CMT Delayed Ack for CMT (docs/algorithms.md §1.4).
    pub dac: bool,
    /// CMT-PF: potentially-failed state (docs/algorithms.md §1.6).
    pub pf_enabled: bool,
    /// PF threshold: PF is entered when the error count exceeds this (0 = CMT-PF).
    pub pfmr: u32,
    /// cwnd after PF → ACTIVE via HEARTBEAT-ACK, in MTUs (CMT-PF1 = 1, CMT-PF2 = 2).
    pub pf_cwnd_mtus: u32,
    /// Initial ssthresh in bytes; `None` = the peer's initial a_rwnd (RFC 4960 §7.2.1).
    pub initial_ssthresh: Option<u64>,
    /// Initial cwnd in window units (MTUs); `None` = RFC 9260 §7.2.1's formula. Deployed
    /// TCP and QUIC stacks start at 10 (RFC 6928, RFC 9002 §7.2).
    pub initial_window: Option<u32>,
    /// Halve cwnd (down to 4·MTU) for every RTO a path sends no data (RFC 4960 §7.2.1).
    pub idle_cwnd_decay: bool,
    /// Most gap-ack blocks one SACK reports, besides what fits in one packet
    /// ([`Config::sack_entries`]); the rest are left for later SACKs.
    pub max_gap_blocks: usize,
    /// Receiver-driven CMT (docs/algorithms.md §2–3): the sender tags DATA with round and path
    /// sequence numbers, the receiver estimates and advertises per-path rates. Both
    /// endpoints must agree.
    pub rev: Option<crate::rev::RevConfig>,
    /// Path confirmation (RFC 9260 §5.4): every path but the first (the one the
    /// handshake used) starts unconfirmed — no data until a HEARTBEAT on it is
    /// answered. Unconfirmed paths use the potentially-failed state. The runtime turns
    /// this on; the simulator's paths are known to work.
    pub confirm_paths: bool,
    /// Outage handling ([`Outage`]); `None`: RFC 9260's Path.Max.Retrans and
    /// Association.Max.Retrans with RTO back-off to RTO.Max.
    pub outage: Option<Outage>,
    /// Explicit congestion notification (RFC 3168; RFC 9260 Appendix A): offered in the
    /// INIT exchange and used when the peer offers it too; then DATA goes out ECN-capable
    /// and a Congestion Experienced mark cuts the window as a loss would, without one.
    pub ecn: bool,
    /// How the sender detects loss ([`Recovery`]).
    pub recovery: Recovery,
    /// Whether a stalled path's data is sent again on another ([`Reinject`]).
    pub reinject: Reinject,
    /// How much new data may be outstanding past the cumulative ack, besides the
    /// peer's window ([`SendBuffer`]).
    pub send_buffer: SendBuffer,
    /// Proportional Rate Reduction (RFC 9937, as Linux runs it per TCP connection): a
    /// window reduction for a loss or an ECN mark spreads over the round trip that
    /// follows — each ack lets out a share of what it delivered — instead of cutting
    /// the window at once. Not with `Recovery::Quic` (RFC 9002 cuts at once) nor a
    /// rate-based controller (BBR sets its own window in recovery).
    pub prr: bool,
    /// SACK at once, despite DAC, a DATA chunk that fills the hole at the front of the
    /// sequence: the next in order, with data held out of order behind it. TCP
    /// acknowledges at once a segment that fills a gap (RFC 5681 §4.2); with DAC alone
    /// that SACK waits for the delayed-ack timer while a sender bounded by its send
    /// buffer waits for it (docs/algorithms.md §1.16, decision D59).
    pub ack_filled_holes: bool,
    /// Set the I bit (RFC 7053, SACK-IMMEDIATELY) on the last DATA chunk of the stream
    /// once the application has closed it, so the receiver acknowledges it at once
    /// instead of after the delayed-ack timer — which a sender waiting for that SACK to
    /// close pays at every transfer whose last packet is odd (with RTO.Min 0.2 s, a
    /// timeout and a needless retransmission as well). The real runtime sets it; the
    /// simulator's transfers end at delivery and never close.
    pub sack_immediately: bool,
}

/// How the sender detects lost DATA (docs/algorithms.md §1.12).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Recovery {
    /// RFC 9260 §7.2.4: missing reports, with CMT's SFR and DAC, trigger fast
    /// retransmit after `dupthresh` of them; the T3-rtx timer catches the rest.
    #[default]
    Sctp,
    /// RACK-TLP per path (RFC 8985), as Linux runs it per MPTCP subflow: a chunk is
    /// lost a reordering window after a chunk sent later on its path was delivered,
    /// and a tail loss is probed for after two round trips of silence.
    RackTlp,
    /// QUIC's loss detection per path (RFC 9002), as multipath QUIC runs it: a chunk is
    /// lost three transmissions or 9/8 of a round trip after a later one on its path
    /// was acknowledged, and a probe timeout stands in for the T3-rtx timer.
    Quic,
}

impl Recovery {
    /// Its name in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Recovery::Sctp => "sctp",
            Recovery::RackTlp => "rack-tlp",
            Recovery::Quic => "quic",
        }
    }
}

impl std::str::FromStr for Recovery {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        by_name(
            &[Recovery::Sctp, Recovery::RackTlp, Recovery::Quic],
            Recovery::name,
            s,
        )
    }
}

/// The one of `all` whose `name` is `s`, or an error that lists the names.
fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str) -> Result<T, String> {
    all.iter().copied().find(|&r| name(r) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|&r| name(r)).collect();
        format!("`{s}` is not one of {}", names.join(", "))
    })
}

/// Whether data held up on one path is sent again on another, besides the
/// retransmission policy's own resends (docs/algorithms.md §1.13).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reinject {
    /// Only the retransmission policy resends.
    #[default]
    Off,
    /// Upstream Linux MPTCP's reinjection (`net/mptcp/protocol.c`, `pm.c`): an
    /// association-level timer resends the oldest unacknowledged data on an idle path,
    /// and a path without progress for more than four of its periods is marked stale
    /// and its data copied to another.
    Linux,
}

impl Reinject {
    /// Its name in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Reinject::Off => "off",
            Reinject::Linux => "linux",
        }
    }
}

impl std::str::FromStr for Reinject {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        by_name(&[Reinject::Off, Reinject::Linux], Reinject::name, s)
    }
}

/// The sender's own bound on data sent and not cumulatively acknowledged
/// (docs/algorithms.md §1.16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SendBuffer {
    /// No bound but the peer's receive window (an SCTP sender's model).
    #[default]
    Off,
    /// Linux MPTCP's connection-level send buffer: data leaves the buffer only when
    /// the cumulative DATA_ACK passes it, and the buffer is the sum of the subflows'
    /// buffers, each autotuned to twice its largest window in kernel memory
    /// (`tcp_sndbuf_expand`, `__mptcp_sync_sndbuf`; decision D57); and each path's
    /// write queue, which takes new data while that path's buffer has room and sends
    /// it as its window opens (`__mptcp_push_pending`; decision D58).
    Linux,
}

impl SendBuffer {
    /// Its name in scenario files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            SendBuffer::Off => "off",
            SendBuffer::Linux => "linux",
        }
    }
}

impl std::str::FromStr for SendBuffer {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        by_name(&[SendBuffer::Off, SendBuffer::Linux], SendBuffer::name, s)
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            compat: Compat::Rfc,
            mtu: 1500,
            ip_header_len: 20,
            rbuf: 65536,
            rto_initial: Duration::from_secs(3),
            rto_min: Duration::from_secs(1),
            rto_max: Duration::from_secs(60),
            max_burst: 4,
            max_burst_mode: MaxBurstMode::Always,
            path_max_retrans: 5,
            assoc_max_retrans: 10,
            heartbeats: true,
            hb_interval: Duration::from_secs(30),
            sack_delay: Duration::from_millis(200),
            sack_freq: 2,
            dupthresh: 3,
            sfr: true,
            cuc: true,
            dac: true,
            pf_enabled: false,
            pfmr: 0,
            pf_cwnd_mtus: 2,
            initial_ssthresh: None,
            initial_window: None,
            idle_cwnd_decay: true,
            max_gap_blocks: usize::MAX,
            rev: None,
            confirm_paths: false,
            outage: None,
            ecn: false,
            recovery: Recovery::Sctp,
            reinject: Reinject::Off,
            send_buffer: SendBuffer::Off,
            prr: false,
            ack_filled_holes: false,
            sack_immediately: false,
        }
    }
}

/// The largest packet IPv4 can carry (its 16-bit total length) and the largest
/// `mtu` accepted.
pub const MAX_MTU: u32 = 65_535;

impl Config {
    /// Largest user payload of one DATA chunk that fits one packet:
    /// `mtu − ip_header − 12 (common header) − 16 (DATA header)`, rounded down to a
    /// multiple of 4 so that the chunk's padding (RFC 9260 §3.2) fits too (1452 for MTU
    /// 1500 over IPv4). Receiver-driven CMT's round info and, with ECN, room for a CWR
    /// chunk are kept free.
    pub fn max_payload(&self) -> u32 {
        let round_info = match self.rev {
            Some(_) => crate::packet::ROUND_INFO_LEN as u32,
            None => 0,
        };
        let cwr = if self.ecn { 8 } else { 0 };
        (self
            .mtu
            .saturating_sub(self.ip_header_len + 12 + 16 + round_info + cwr)
            & !3)
            .max(4)
    }

    /// The unit of window arithmetic (slow-start and congestion-avoidance steps, the
    /// window after a timeout, PF recovery windows, idle-decay floors): the MTU (RFC
    /// 9260 §7.2), or with ns-2.35 compatibility the largest DATA chunk, `mtu −
    /// ip_header − 12` (ns-2's `uiMaxDataSize`, 1468 bytes for MTU 1500).
    pub fn cwnd_unit(&self) -> u64 {
        match self.compat {
            Compat::Rfc => self.mtu as u64,
            Compat::Ns2 => self.mtu.saturating_sub(self.ip_header_len + 12).max(1) as u64,
        }
    }

    /// The lowest ssthresh a loss sets: 4·MTU (RFC 9260 §7.2.3), or two chunks with
    /// ns-2.35 compatibility (the CMT agent's `MAX(cwnd/2, initialCwnd_ · uiMaxDataSize)`
    /// with ns-2's default `initialCwnd_ = 2`).
    pub fn min_ssthresh(&self) -> u64 {
        match self.compat {
            Compat::Rfc => 4 * self.cwnd_unit(),
            Compat::Ns2 => 2 * self.cwnd_unit(),
        }
    }

    /// How many 4-byte entries (gap-ack blocks, then duplicate TSNs) a SACK carries:
    /// as many as fit in one packet after the IP and common headers and the SACK's own
    /// 16 bytes (RFC 9260 §6.2 keeps a SACK within the PMTU), or with ns-2.35
    /// compatibility ns-2's rule, an entry while `size + 4 < mtu − ip_header − 12`
    /// (`GenChunk`: 362 at MTU 1500, 237 at 1000, 131 at 576).
    pub fn sack_entries(&self) -> usize {
        let room = self.mtu.saturating_sub(self.ip_header_len + 12) as usize;
        match self.compat {
            Compat::Rfc => room.saturating_sub(16) / 4,
            Compat::Ns2 => room.saturating_sub(20).div_ceil(4),
        }
    }

    /// Initial cwnd of RFC 4960 §7.2.1: `min(4·MTU, max(2·MTU, 4380))`, MTU being the
    /// window unit (ns-2.35 computes the same formula with its chunk size: 4380 bytes) —
    /// or `initial_window` units when set.
    pub fn initial_cwnd(&self) -> u64 {
        let unit = self.cwnd_unit();
        match self.initial_window {
            Some(n) => n as u64 * unit,
            None => (4 * unit).min((2 * unit).max(4380)),
        }
    }

    /// Checks the values for consistency; the error names the offending field.
    pub fn validate(&self) -> Result<(), String> {
        if self.mtu > MAX_MTU {
            return Err(format!(
                "mtu {} is larger than an IP packet can be ({MAX_MTU} bytes)",
                self.mtu
            ));
        }
        // In u64: a huge header size must not wrap around past this check.
        if (self.mtu as u64) < self.ip_header_len as u64 + 12 + 16 + 4 {
            return Err(format!(
                "mtu {} is too small to carry a DATA chunk",
                self.mtu
            ));
        }
        if self.rbuf < self.max_payload() {
            return Err(format!(
                "rbuf {} is smaller than one chunk ({} bytes)",
                self.rbuf,
                self.max_payload()
            ));
        }
        if self.rto_min > self.rto_max || self.rto_initial > self.rto_max {
            return Err("rto_min and rto_initial must not exceed rto_max".into());
        }
        if self.initial_window == Some(0) {
            return Err("initial_window must be at least 1".into());
        }
        if self.rto_min == Duration::ZERO {
            return Err("rto_min must be positive".into());
        }
        if self.dupthresh == 0 {
            return Err("dupthresh must be at least 1".into());
        }
        if self.sack_freq == 0 {
            return Err("sack_freq must be at least 1".into());
        }
        if self.prr && self.recovery == Recovery::Quic {
            return Err("prr applies to recovery \"sctp\" or \"rack-tlp\", not \"quic\"".into());
        }
        if !(1..=2).contains(&self.pf_cwnd_mtus) {
            return Err("pf_cwnd_mtus must be 1 or 2".into());
        }
        if let Some(o) = self.outage {
            if o.probe_interval < self.rto_min || o.probe_interval > self.rto_max {
                return Err("outage probe_interval must lie between rto_min and rto_max".into());
            }
            if o.tolerance < o.probe_interval {
                return Err("outage tolerance must be at least the probe interval".into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::data_chunk_len;

    #[test]
    fn a_huge_ip_header_is_refused_not_wrapped_around() {
        let c = Config {
            ip_header_len: u32::MAX,
            ..Config::default()
        };
        assert!(c
            .validate()
            .unwrap_err()
            .contains("too small to carry a DATA chunk"));
    }

    #[test]
    fn a_full_data_chunk_with_its_padding_never_exceeds_the_mtu() {
        // 12-byte common header + padded DATA chunk + the IP (and UDP) header ≤ mtu,
        // for MTUs that are and are not 4-aligned after the headers.
        for ip in [20, 28, 48] {
            for mtu in [576, 1280, 1499, 1500, 1501, 1502, 1503, 8240, 65_535] {
                let c = Config {
                    mtu,
                    ip_header_len: ip,
                    ..Config::default()
                };
                let len = c.max_payload() as usize;
                let wire = ip as usize + 12 + data_chunk_len(len);
                assert!(wire <= mtu as usize, "mtu {mtu} ip {ip}: {wire}");
                assert!(
                    wire + 4 > mtu as usize,
                    "mtu {mtu} ip {ip}: {wire} wastes a word"
                );
            }
        }
        let c = Config::default();
        assert_eq!(c.max_payload(), 1452);
        let big = Config {
            mtu: 65_536,
            ..Config::default()
        };
        assert!(big.validate().unwrap_err().contains("65536"));
    }
}
