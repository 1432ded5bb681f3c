//! # cmt-net — the real runtime (in progress)
//!
//! Drives the same [`cmt_core::Association`] over UDP sockets bound to several local
//! addresses, with SCTP packets encapsulated in UDP (RFC 6951). The sockets, timers and
//! the wire codec arrive with the runtime work; this crate currently fixes the
//! constants the runtime and the pcap writer share.

/// The UDP port of SCTP-over-UDP encapsulation (RFC 6951 §5.1, IANA "sctp-tunneling").
pub const SCTP_UDP_PORT: u16 = 9899;

/// Bytes of IPv4 + UDP header in front of an encapsulated SCTP packet: what a real path
/// charges per packet, for `Config::ip_header_len` in runtime associations.
pub const IPV4_UDP_OVERHEAD: u32 = 20 + 8;
