//! Association setup (RFC 9260 §5.1): INIT → INIT ACK (with a state cookie) → COOKIE
//! ECHO → COOKIE ACK, sans-IO.
//!
//! * The [`Listener`] keeps **no per-peer state** before a valid COOKIE ECHO: everything
//!   it needs (both verification tags, both initial TSNs, the peer's window, addresses
//!   and extensions, a timestamp) travels in the cookie, authenticated with
//!   HMAC-SHA256 under the listener's secret key (RFC 9260 §5.1.3). A cookie that is
//!   forged, altered, for another tag or older than its lifetime is refused.
//! * The [`Connector`] sends INIT and COOKIE ECHO with T1 retransmission (RTO.Initial,
//!   doubling, at most `max_init_retrans` times, §5.1.6).
//! * Either side ends with [`Established`]: the [`AssocInit`] for
//!   [`Association::new`](crate::Association::new), the peer's addresses (one path per
//!   address pair, the runtime decides the pairing) and the chunk types it supports.
//!
//! Verification tags (§8.5): INIT carries tag 0; every later packet carries the tag the
//! receiver chose; packets with a wrong tag are dropped (and counted by the caller).
//!
//! With [`SetupConfig::auth`] set, both sides also announce RFC 4895 authentication
//! (RANDOM, CHUNKS, HMAC-ALGO and the AUTH chunk type among the supported extensions),
//! the listener keeps both announcements in the cookie, and [`Established::auth`]
//! carries the association's [`Session`]. A peer that does not announce it is refused:
//! the listener answers its INIT with an ABORT (Protocol Violation), the connector
//! gives up with [`SetupError::AuthUnsupported`].

use std::net::IpAddr;

use bytes::Bytes;
use hmac::{Hmac, Mac};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::Sha256;

use crate::assoc::AssocInit;
use crate::auth::{AuthConfig, Offer, Session, RANDOM_LEN};
use crate::packet::{Chunk, InitChunk, InitParam, Packet};
use crate::time::{Duration, Time};
use crate::wire::{chunk_type, param_type};

pub use crate::packet::{
    CAUSE_INVALID_MANDATORY_PARAMETER, CAUSE_OUT_OF_RESOURCE, CAUSE_PROTOCOL_VIOLATION,
    CAUSE_USER_INITIATED_ABORT,
};

const COOKIE_VERSION: u8 = 3;
const MAC_LEN: usize = 32;

/// What an endpoint announces in its INIT / INIT ACK.
#[derive(Clone, Debug, PartialEq)]
pub struct SetupConfig {
    /// Receive buffer (the a_rwnd announced).
    pub rbuf: u32,
    /// Our addresses (one per local interface).
    pub addresses: Vec<IpAddr>,
    /// Chunk types we support beyond RFC 9260 (e.g. the receiver-driven extensions).
    pub extensions: Vec<u8>,
    /// Streams (in and out).
    pub streams: u16,
    /// RTO.Initial for T1.
    pub rto_initial: Duration,
    /// RTO.Max: T1 doubles on each retransmission up to this (RFC 9260 §5.1.6, §6.3.3).
    pub rto_max: Duration,
    /// Max.Init.Retransmits.
    pub max_init_retrans: u32,
    /// Valid.Cookie.Life.
    pub cookie_lifetime: Duration,
    /// RFC 4895 authentication, required of the peer when set.
    pub auth: Option<AuthConfig>,
    /// Parameters the embedder adds to its INIT / INIT ACK (e.g. the runtime's resume
    /// offer); the core does not interpret them.
    pub extra_params: Vec<InitParam>,
    /// The connecting side pads its INIT with a PAD parameter (RFC 4820) to at least
    /// this many bytes of SCTP packet (0: no padding). A listener answers an INIT no
    /// smaller than its INIT ACK without drawing on its budget for unproven sources:
    /// such an answer amplifies nothing (the runtime's senders pad to
    /// [`INIT_PADDED_LEN`]).
    pub pad_init_to: usize,
    /// Offer explicit congestion notification (the ECN Capable parameter, RFC 9260
    /// Appendix A); the association uses it when the peer offers it too.
    pub ecn: bool,
}

/// RFC 4820's PAD parameter type (its two high bits `10`: a receiver that does not know
/// it skips it without a report).
pub const PARAM_PAD: u16 = 0x8005;

/// The size (SCTP packet bytes) the runtime's senders pad their INITs to: QUIC's
/// 1200-byte floor for a first packet (RFC 9000 §14.1), which every path of an IPv6
/// MTU carries whole; an INIT ACK stays well under it.
pub const INIT_PADDED_LEN: usize = 1200;

impl Default for SetupConfig {
    fn default() -> Self {
        SetupConfig {
            rbuf: 65536,
            addresses: Vec::new(),
            extensions: vec![chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT],
            streams: 1,
            rto_initial: Duration::from_secs(3),
            rto_max: Duration::from_secs(60),
            max_init_retrans: 8,
            cookie_lifetime: Duration::from_secs(60),
            auth: None,
            extra_params: Vec::new(),
            pad_init_to: 0,
            ecn: false,
        }
    }
}

/// The outcome of a successful setup, on either side.
#[derive(Clone, Debug, PartialEq)]
pub struct Established {
    /// Tags, TSNs and window for [`Association::new`](crate::Association::new).
    pub init: AssocInit,
    /// The peer's addresses, in the order it listed them.
    pub peer_addresses: Vec<IpAddr>,
    /// Extension chunk types the peer announced.
    pub peer_extensions: Vec<u8>,
    /// The RFC 4895 session, when authentication was configured (and so negotiated).
    pub auth: Option<Session>,
    /// Parameters of the peer's INIT ACK the core does not interpret, as (type, value)
    /// (the connecting side only: a listener keeps no state but the cookie).
    pub peer_unknown_params: Vec<(u16, Bytes)>,
}

fn params(cfg: &SetupConfig, auth: Option<&Offer>) -> Vec<InitParam> {
    let mut p: Vec<InitParam> = cfg
        .addresses
        .iter()
        .map(|a| match a {
            IpAddr::V4(v) => InitParam::Ipv4(*v),
            IpAddr::V6(v) => InitParam::Ipv6(*v),
        })
        .collect();
    let mut ext = cfg.extensions.clone();
    if let Some(offer) = auth {
        ext.push(chunk_type::AUTH);
        p.extend(offer.params());
    }
    if !ext.is_empty() {
        p.push(InitParam::SupportedExtensions(ext));
    }
    if cfg.ecn {
        p.push(InitParam::Unknown {
            ptype: param_type::ECN_CAPABLE,
            value: Bytes::new(),
        });
    }
    p.extend(cfg.extra_params.iter().cloned());
    p
}

/// Whether an INIT or INIT ACK carries the ECN Capable parameter.
fn offers_ecn(init: &InitChunk) -> bool {
    init.params
        .iter()
        .any(|p| matches!(p, InitParam::Unknown { ptype, .. } if *ptype == param_type::ECN_CAPABLE))
}

/// The peer's RFC 4895 announcement, if it supports AUTH and announced it completely —
/// and, when our configuration requires authentication (a pre-shared key), requires
/// DATA authenticated itself: a peer that authenticates only control chunks (such as
/// ASCONF, without a key) holds no key, and its DATA would fail our check.
fn peer_offer(cfg: &SetupConfig, init: &InitChunk, extensions: &[u8]) -> Option<Offer> {
    let required = cfg.auth.as_ref().is_some_and(|a| a.required);
    extensions
        .contains(&chunk_type::AUTH)
        .then(|| Offer::from_params(&init.params))
        .flatten()
        .filter(|o| !required || o.chunks.contains(&chunk_type::DATA))
}

/// Our announcement, with a fresh RANDOM, when authentication is configured.
fn local_offer(cfg: &SetupConfig, rng: &mut ChaCha8Rng) -> Option<Offer> {
    let auth = cfg.auth.as_ref()?;
    let mut random = [0u8; RANDOM_LEN];
    rng.fill(&mut random[..]);
    Some(Offer::local(random, auth))
}

fn peer_info(init: &InitChunk) -> (Vec<IpAddr>, Vec<u8>) {
    let mut addrs = Vec::new();
    let mut ext = Vec::new();
    for p in &init.params {
        match p {
            InitParam::Ipv4(a) => addrs.push(IpAddr::V4(*a)),
            InitParam::Ipv6(a) => addrs.push(IpAddr::V6(*a)),
            InitParam::SupportedExtensions(t) => ext.extend_from_slice(t),
            _ => {}
        }
    }
    (addrs, ext)
}

fn abort(vtag: u32, cause: u16) -> Packet {
    Packet {
        vtag,
        chunks: vec![Chunk::Abort {
            cause: Some(cause),
            reflected: false,
        }],
    }
}

mod connector;
mod listener;

pub use connector::{Connector, SetupError};
pub use listener::{ListenOutcome, Listener};

#[cfg(test)]
mod tests;
