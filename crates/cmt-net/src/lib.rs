//! # cmt-net — the real runtime
//!
//! Drives the same [`cmt_core::Association`] the simulator drives, over UDP sockets bound
//! to several local addresses, with SCTP packets encapsulated in UDP (RFC 6951). tokio
//! sits at the edge only ([`io`]): sockets, reader tasks and the clock; every protocol
//! decision is the sans-IO core's. [`transfer`] moves one file: association setup with a
//! state cookie, the transfer, graceful shutdown.
//!
//! [`relay`] impairs real paths with the simulator's link model; [`replay`] runs a
//! simulator scenario over real sockets through such relays. [`source`] and [`sink`]
//! stream a file from and to disk, the sink durably (fsync and rename on completion).
//!
//! Not yet here (see the real-runtime issue): pcap output of real runs, live progress,
//! sub-millisecond pacing timers.

pub mod io;
pub mod relay;
pub mod replay;
pub mod sink;
pub mod source;
pub mod transfer;
pub mod trust;

/// The UDP port of SCTP-over-UDP encapsulation (RFC 6951 §5.1, IANA "sctp-tunneling").
pub const SCTP_UDP_PORT: u16 = 9899;

/// Bytes of IPv4 + UDP header in front of an encapsulated SCTP packet: what a real path
/// charges per packet, for `Config::ip_header_len` in runtime associations.
pub const IPV4_UDP_OVERHEAD: u32 = 20 + 8;

/// Bytes of IPv6 + UDP header in front of an encapsulated SCTP packet.
pub const IPV6_UDP_OVERHEAD: u32 = 40 + 8;
