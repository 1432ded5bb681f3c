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
use crate::wire::chunk_type;

pub use crate::packet::{
    CAUSE_INVALID_MANDATORY_PARAMETER, CAUSE_OUT_OF_RESOURCE, CAUSE_PROTOCOL_VIOLATION,
    CAUSE_USER_INITIATED_ABORT,
};

const COOKIE_VERSION: u8 = 2;
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
}

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
    p
}

/// The peer's RFC 4895 announcement, if it supports AUTH and announced it completely.
fn peer_offer(init: &InitChunk, extensions: &[u8]) -> Option<Offer> {
    extensions
        .contains(&chunk_type::AUTH)
        .then(|| Offer::from_params(&init.params))
        .flatten()
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
        chunks: vec![Chunk::Abort { cause: Some(cause) }],
    }
}

/// What the listener does with a packet that belongs to no association.
#[derive(Clone, Debug, PartialEq)]
pub enum ListenOutcome {
    /// Send this (an INIT ACK, or an ABORT for an invalid INIT); no state kept.
    Reply(Packet),
    /// A valid COOKIE ECHO: the association exists now; send the COOKIE ACK.
    Established(Box<Established>, Packet),
    /// Ignore the packet (the reason is for counters and logs).
    Drop(&'static str),
}

/// The passive side. Holds only its secret key and random stream.
pub struct Listener {
    cfg: SetupConfig,
    key: [u8; 32],
    rng: ChaCha8Rng,
}

/// The cookie's contents.
#[derive(Clone, Debug, PartialEq)]
struct Cookie {
    created_ns: u64,
    local_vtag: u32,
    peer_vtag: u32,
    initial_tsn: u32,
    peer_initial_tsn: u32,
    peer_rwnd: u32,
    peer_addresses: Vec<IpAddr>,
    peer_extensions: Vec<u8>,
    /// RFC 4895 key vectors, (ours, the peer's), when authentication was negotiated.
    auth: Option<(Vec<u8>, Vec<u8>)>,
}

impl Cookie {
    fn body(&self) -> Vec<u8> {
        let mut b = vec![COOKIE_VERSION];
        b.extend_from_slice(&self.created_ns.to_be_bytes());
        for v in [
            self.local_vtag,
            self.peer_vtag,
            self.initial_tsn,
            self.peer_initial_tsn,
            self.peer_rwnd,
        ] {
            b.extend_from_slice(&v.to_be_bytes());
        }
        b.push(self.peer_addresses.len().min(255) as u8);
        for a in self.peer_addresses.iter().take(255) {
            match a {
                IpAddr::V4(v) => {
                    b.push(4);
                    b.extend_from_slice(&v.octets());
                }
                IpAddr::V6(v) => {
                    b.push(6);
                    b.extend_from_slice(&v.octets());
                }
            }
        }
        b.push(self.peer_extensions.len().min(255) as u8);
        b.extend(self.peer_extensions.iter().take(255));
        if let Some((ours, theirs)) = &self.auth {
            for v in [ours, theirs] {
                b.extend_from_slice(&(v.len().min(u16::MAX as usize) as u16).to_be_bytes());
                b.extend(v.iter().take(u16::MAX as usize));
            }
        }
        b
    }

    fn parse(b: &[u8]) -> Option<Cookie> {
        let mut pos = 0;
        let mut take = |n: usize| {
            let s = b.get(pos..pos + n)?;
            pos += n;
            Some(s)
        };
        if take(1)? != [COOKIE_VERSION] {
            return None;
        }
        let created_ns = u64::from_be_bytes(take(8)?.try_into().ok()?);
        let mut u = [0u32; 5];
        for x in &mut u {
            *x = u32::from_be_bytes(take(4)?.try_into().ok()?);
        }
        let n = take(1)?[0];
        let mut peer_addresses = Vec::with_capacity(n as usize);
        for _ in 0..n {
            peer_addresses.push(match take(1)?[0] {
                4 => IpAddr::from(<[u8; 4]>::try_from(take(4)?).ok()?),
                6 => IpAddr::from(<[u8; 16]>::try_from(take(16)?).ok()?),
                _ => return None,
            });
        }
        let e = take(1)?[0] as usize;
        let peer_extensions = take(e)?.to_vec();
        let mut vector = || {
            let n = u16::from_be_bytes(take(2)?.try_into().ok()?) as usize;
            Some(take(n)?.to_vec())
        };
        let auth = match vector() {
            Some(ours) => Some((ours, vector()?)),
            None => None,
        };
        Some(Cookie {
            created_ns,
            local_vtag: u[0],
            peer_vtag: u[1],
            initial_tsn: u[2],
            peer_initial_tsn: u[3],
            peer_rwnd: u[4],
            peer_addresses,
            peer_extensions,
            auth,
        })
    }
}

impl Listener {
    /// A listener with secret `key` (keep it secret: it authenticates cookies).
    pub fn new(cfg: SetupConfig, key: [u8; 32], seed: u64) -> Self {
        Listener {
            cfg,
            key,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    fn mac(&self) -> Hmac<Sha256> {
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length")
    }

    /// Handles a packet for which no association exists.
    pub fn handle(&mut self, now: Time, packet: &Packet) -> ListenOutcome {
        match packet.chunks.first() {
            Some(Chunk::Init(init)) => self.on_init(now, packet, init),
            Some(Chunk::CookieEcho { cookie }) => self.on_cookie_echo(now, packet, cookie),
            Some(_) => ListenOutcome::Drop("no association for this packet"),
            None => ListenOutcome::Drop("empty packet"),
        }
    }

    fn on_init(&mut self, now: Time, packet: &Packet, init: &InitChunk) -> ListenOutcome {
        if packet.vtag != 0 || packet.chunks.len() != 1 {
            return ListenOutcome::Drop("INIT must be alone with verification tag 0");
        }
        if init.initiate_tag == 0
            || init.outbound_streams == 0
            || init.inbound_streams == 0
            || init.a_rwnd < 1500
        {
            return ListenOutcome::Reply(abort(
                init.initiate_tag,
                CAUSE_INVALID_MANDATORY_PARAMETER,
            ));
        }
        let (peer_addresses, peer_extensions) = peer_info(init);
        let ours = local_offer(&self.cfg, &mut self.rng);
        let theirs = peer_offer(init, &peer_extensions);
        if ours.is_some() && theirs.is_none() {
            // Authentication is required and the peer cannot do it.
            return ListenOutcome::Reply(abort(init.initiate_tag, CAUSE_PROTOCOL_VIOLATION));
        }
        let auth = ours
            .as_ref()
            .zip(theirs.as_ref())
            .map(|(o, t)| (o.key_vector(), t.key_vector()));
        let cookie = Cookie {
            created_ns: now.as_nanos(),
            local_vtag: self.rng.gen_range(1..=u32::MAX),
            peer_vtag: init.initiate_tag,
            initial_tsn: self.rng.gen(),
            peer_initial_tsn: init.initial_tsn,
            peer_rwnd: init.a_rwnd,
            peer_addresses,
            peer_extensions,
            auth,
        };
        let mut body = cookie.body();
        let mut mac = self.mac();
        mac.update(&body);
        body.extend_from_slice(&mac.finalize().into_bytes());
        let mut p = params(&self.cfg, ours.as_ref());
        p.push(InitParam::StateCookie(Bytes::from(body)));
        ListenOutcome::Reply(Packet {
            vtag: init.initiate_tag,
            chunks: vec![Chunk::InitAck(InitChunk {
                initiate_tag: cookie.local_vtag,
                a_rwnd: self.cfg.rbuf,
                outbound_streams: self.cfg.streams.min(init.inbound_streams),
                inbound_streams: self.cfg.streams.min(init.outbound_streams),
                initial_tsn: cookie.initial_tsn,
                params: p,
            })],
        })
    }

    fn on_cookie_echo(&mut self, now: Time, packet: &Packet, cookie: &[u8]) -> ListenOutcome {
        if cookie.len() < MAC_LEN {
            return ListenOutcome::Drop("cookie too short");
        }
        let (body, tag) = cookie.split_at(cookie.len() - MAC_LEN);
        let mut mac = self.mac();
        mac.update(body);
        if mac.verify_slice(tag).is_err() {
            return ListenOutcome::Drop("cookie authentication failed");
        }
        let Some(c) = Cookie::parse(body) else {
            return ListenOutcome::Drop("cookie unreadable");
        };
        if packet.vtag != c.local_vtag {
            return ListenOutcome::Drop("COOKIE ECHO with a wrong verification tag");
        }
        let age = now.as_nanos().saturating_sub(c.created_ns);
        if age > self.cfg.cookie_lifetime.as_nanos() {
            return ListenOutcome::Drop("stale cookie");
        }
        let auth = match (&self.cfg.auth, &c.auth) {
            (None, _) => None,
            (Some(cfg), Some((ours, theirs))) => {
                let session = Offer::from_key_vector(ours)
                    .zip(Offer::from_key_vector(theirs))
                    .and_then(|(o, t)| Session::new(&cfg.key, &o, &t));
                match session {
                    Some(s) => Some(s),
                    None => return ListenOutcome::Drop("cookie's authentication state unusable"),
                }
            }
            (Some(_), None) => return ListenOutcome::Drop("cookie without authentication"),
        };
        let est = Established {
            init: AssocInit {
                local_vtag: c.local_vtag,
                peer_vtag: c.peer_vtag,
                initial_tsn: c.initial_tsn,
                peer_initial_tsn: c.peer_initial_tsn,
                peer_rwnd: c.peer_rwnd,
                seed: self.rng.gen(),
            },
            peer_addresses: c.peer_addresses,
            peer_extensions: c.peer_extensions,
            auth,
        };
        let ack = Packet {
            vtag: c.peer_vtag,
            chunks: vec![Chunk::CookieAck],
        };
        ListenOutcome::Established(Box::new(est), ack)
    }
}

/// Where the connector is.
#[derive(Clone, Debug, PartialEq)]
enum State {
    CookieWait,
    CookieEchoed {
        cookie: Bytes,
        peer: InitChunk,
        auth: Option<Session>,
    },
    Done,
    Failed,
}

/// Why a connection attempt ended without an association.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupError {
    /// No answer after Max.Init.Retransmits.
    TimedOut,
    /// The peer aborted (with its error cause, if any).
    Aborted(Option<u16>),
    /// The INIT ACK was unusable (no cookie, zero tag).
    BadInitAck,
    /// Authentication is configured and the peer does not announce RFC 4895 support.
    AuthUnsupported,
}

impl std::fmt::Display for SetupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SetupError::TimedOut => write!(f, "no answer to INIT"),
            SetupError::Aborted(Some(c)) => {
                write!(f, "the peer refused the association (cause {c})")
            }
            SetupError::Aborted(None) => write!(f, "the peer refused the association"),
            SetupError::BadInitAck => write!(f, "unusable INIT ACK (no cookie or a zero tag)"),
            SetupError::AuthUnsupported => write!(
                f,
                "the peer does not support SCTP authentication (RFC 4895), which the key requires"
            ),
        }
    }
}

/// The active side.
pub struct Connector {
    cfg: SetupConfig,
    state: State,
    tag: u32,
    initial_tsn: u32,
    seed: u64,
    send_now: bool,
    t1: Option<Time>,
    rto: Duration,
    retries: u32,
    /// Our RFC 4895 announcement, when authentication is configured.
    offer: Option<Offer>,
    /// Packets with a wrong verification tag that were dropped.
    pub bad_vtag: u64,
}

impl Connector {
    /// Starts a connection attempt (the INIT goes out at the first poll).
    pub fn new(cfg: SetupConfig, seed: u64) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        Connector {
            tag: rng.gen_range(1..=u32::MAX),
            initial_tsn: rng.gen(),
            seed: rng.gen(),
            offer: local_offer(&cfg, &mut rng),
            rto: cfg.rto_initial,
            cfg,
            state: State::CookieWait,
            send_now: true,
            t1: None,
            retries: 0,
            bad_vtag: 0,
        }
    }

    fn init_packet(&self) -> Packet {
        Packet {
            vtag: 0,
            chunks: vec![Chunk::Init(InitChunk {
                initiate_tag: self.tag,
                a_rwnd: self.cfg.rbuf,
                outbound_streams: self.cfg.streams,
                inbound_streams: self.cfg.streams,
                initial_tsn: self.initial_tsn,
                params: params(&self.cfg, self.offer.as_ref()),
            })],
        }
    }

    /// The INIT or COOKIE ECHO to (re)send now.
    pub fn poll_transmit(&mut self, now: Time) -> Option<Packet> {
        if !std::mem::take(&mut self.send_now) {
            return None;
        }
        self.t1 = Some(now + self.rto);
        match &self.state {
            State::CookieWait => Some(self.init_packet()),
            State::CookieEchoed { cookie, peer, .. } => Some(Packet {
                vtag: peer.initiate_tag,
                chunks: vec![Chunk::CookieEcho {
                    cookie: cookie.clone(),
                }],
            }),
            State::Done | State::Failed => None,
        }
    }

    /// When T1 fires.
    pub fn poll_timeout(&self) -> Option<Time> {
        self.t1
    }

    /// T1 expiry: resend with a doubled RTO, or give up.
    pub fn handle_timeout(&mut self, now: Time) -> Result<(), SetupError> {
        if self.t1.is_none_or(|t| t > now) {
            return Ok(());
        }
        self.t1 = None;
        self.retries += 1;
        if self.retries > self.cfg.max_init_retrans {
            self.state = State::Failed;
            return Err(SetupError::TimedOut);
        }
        self.rto =
            Duration::from_nanos(self.rto.as_nanos().saturating_mul(2)).min(self.cfg.rto_max);
        self.send_now = true;
        Ok(())
    }

    /// An answer from the peer. `Ok(Some(_))` when the association is established.
    pub fn handle_packet(&mut self, packet: &Packet) -> Result<Option<Established>, SetupError> {
        if packet.vtag != self.tag {
            self.bad_vtag += 1;
            return Ok(None);
        }
        match (packet.chunks.first(), &self.state) {
            (Some(Chunk::Abort { cause }), _) => {
                self.state = State::Failed;
                Err(SetupError::Aborted(*cause))
            }
            (Some(Chunk::InitAck(ack)), State::CookieWait) => {
                let cookie = ack.params.iter().find_map(|p| match p {
                    InitParam::StateCookie(c) => Some(c.clone()),
                    _ => None,
                });
                let Some(cookie) = cookie.filter(|_| ack.initiate_tag != 0) else {
                    self.state = State::Failed;
                    return Err(SetupError::BadInitAck);
                };
                let auth = match (&self.cfg.auth, &self.offer) {
                    (Some(cfg), Some(ours)) => {
                        let (_, ext) = peer_info(ack);
                        let session = peer_offer(ack, &ext)
                            .and_then(|theirs| Session::new(&cfg.key, ours, &theirs));
                        if session.is_none() {
                            self.state = State::Failed;
                            return Err(SetupError::AuthUnsupported);
                        }
                        session
                    }
                    _ => None,
                };
                self.state = State::CookieEchoed {
                    cookie,
                    peer: ack.clone(),
                    auth,
                };
                self.send_now = true;
                self.retries = 0;
                self.rto = self.cfg.rto_initial;
                Ok(None)
            }
            (Some(Chunk::CookieAck), State::CookieEchoed { peer, auth, .. }) => {
                let (peer_addresses, peer_extensions) = peer_info(peer);
                let auth = auth.clone();
                let est = Established {
                    init: AssocInit {
                        local_vtag: self.tag,
                        peer_vtag: peer.initiate_tag,
                        initial_tsn: self.initial_tsn,
                        peer_initial_tsn: peer.initial_tsn,
                        peer_rwnd: peer.a_rwnd,
                        seed: self.seed,
                    },
                    peer_addresses,
                    peer_extensions,
                    auth,
                };
                self.state = State::Done;
                self.t1 = None;
                Ok(Some(est))
            }
            _ => Ok(None), // duplicates and late answers
        }
    }
}

#[cfg(test)]
mod tests;
