//! # cmt-net — the real runtime
//!
//! Drives the same [`cmt_core::Association`] the simulator drives, over UDP sockets bound
//! to several local addresses, with SCTP packets encapsulated in UDP (RFC 6951). tokio
//! sits at the edge only ([`io`]): sockets, the clock, pcap capture and SCTP-AUTH
//! signing and checking (RFC 4895); every protocol decision is the sans-IO core's.
//! [`transfer`] moves one file: association setup with a state cookie, the transfer with
//! progress reports, graceful shutdown and the receiver's end-to-end confirmation.
//! [`trust`] holds packets from unconfirmed source addresses until they answer a probe.
//!
//! [`relay`] impairs real paths with the simulator's link model; [`replay`] runs a
//! simulator scenario over real sockets through such relays. [`source`] and [`sink`]
//! stream a file from and to disk, the sink durably (fsync and rename on completion);
//! [`resume`] continues an interrupted transfer where it stopped.
//! Timers and pacing run at sub-millisecond precision
//! ([`io::sleep_precisely_until`]).

pub mod ifwatch;
pub mod io;
pub mod limit;
pub mod pipe;
pub mod relay;
pub mod replay;
pub mod resume;
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
